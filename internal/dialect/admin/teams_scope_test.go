package admin

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/logstore"
)

var (
	searchAdmin  = &auth.Principal{User: "usr_ta", Role: auth.RoleTeamAdmin, Teams: []string{"search"}}
	searchViewer = &auth.Principal{User: "usr_v", Role: auth.RoleViewer, Teams: []string{"search"}}
)

// teamNames are the team names of a GET /admin/teams answer.
func teamNames(t *testing.T, v any, err error) []string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tm := range v.(map[string]any)["data"].([]Team) {
		out = append(out, tm.Name)
	}
	return out
}

// memberIDs are the user ids of a members answer.
func memberIDs(t *testing.T, v any, err error) []string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, u := range v.(Members).Data {
		out = append(out, u.ID)
	}
	return out
}

// A team_admin and a viewer read their own teams through /admin/teams: the list shows only
// theirs, another team's id is a 404 as no team; the team itself (limits, budget, access)
// changes for admin only; a member has no team routes.
func TestTeamsForRoles(t *testing.T) {
	_, ops := policyAPI(t)
	call := ops["call"]
	member := &auth.Principal{User: "usr_m", Role: auth.RoleMember, Teams: []string{"search"}}
	for _, p := range []*auth.Principal{searchAdmin, searchViewer} {
		_, v, err := call("GET", "/admin/teams", req{p, Input{}})
		if got := teamNames(t, v, err); !slices.Equal(got, []string{"search"}) {
			t.Errorf("%s lists %v, want [search]", p.Role, got)
		}
		_, v, err = call("GET", "/admin/teams/:id", req{p, Input{ID: "search"}})
		if err != nil || v.(Team).Name != "search" || len(v.(Team).Keys) != 1 || v.(Team).Keys[0].ID != "key_search" {
			t.Errorf("%s reading their team: got %+v, %v; want search and its key", p.Role, v, err)
		}
		for _, id := range []string{"ads", "nothing"} {
			if _, _, err := call("GET", "/admin/teams/:id", req{p, Input{ID: id}}); status(err) != 404 || !strings.Contains(err.Error(), "No team") {
				t.Errorf("%s reading team %s: got %v, want the 404 of no team", p.Role, id, err)
			}
		}
		for _, c := range []struct{ m, p, id string }{
			{"PATCH", "/admin/teams/:id", "search"}, {"DELETE", "/admin/teams/:id", "search"}, {"POST", "/admin/teams", ""},
		} {
			if _, _, err := call(c.m, c.p, req{p, Input{ID: c.id, Body: []byte(`{"rpm":1,"name":"x"}`)}}); status(err) != 403 {
				t.Errorf("%s %s %s: got %v, want 403 (admin only)", p.Role, c.m, c.p, err)
			}
		}
	}
	if _, _, err := call("GET", "/admin/teams", req{member, Input{}}); status(err) != 403 {
		t.Errorf("member listing teams: got %v, want 403", err)
	}
	_, v, err := call("GET", "/admin/teams", req{auth.Bootstrap, Input{}})
	if got := teamNames(t, v, err); !slices.Equal(got, []string{"search", "ads"}) {
		t.Errorf("admin lists %v, want every team", got)
	}
}

// A team_admin adds and removes their team's members, and nothing else of theirs; a viewer
// reads them only; another team's members are a 404; a user whose teams come from their
// OpenID provider is refused; each change is in the audit log with the members before and
// after.
func TestTeamMembers(t *testing.T) {
	a, ops := policyAPI(t)
	call := ops["call"]
	ctx := context.Background()
	mk := func(id string, role auth.Role, source string, teams ...string) {
		if err := a.Users.CreateUser(ctx, &auth.User{ID: id, Role: role, Teams: teams, Source: source, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	mk("usr_ann", auth.RoleMember, auth.SourceAPI, "search")
	mk("usr_bob", auth.RoleViewer, auth.SourceAPI, "ads")
	mk("usr_sso", auth.RoleMember, auth.SourceOIDC, "ads")
	members := func(p *auth.Principal, team string) []string {
		t.Helper()
		_, v, err := call("GET", "/admin/teams/:id/members", req{p, Input{ID: team}})
		return memberIDs(t, v, err)
	}
	patch := func(p *auth.Principal, team, body string) (any, error) {
		_, v, err := call("PATCH", "/admin/teams/:id/members", req{p, Input{ID: team, Body: []byte(body)}})
		return v, err
	}
	if got := members(searchViewer, "search"); !slices.Equal(got, []string{"usr_ann"}) {
		t.Errorf("the viewer reads %v, want [usr_ann]", got)
	}
	if _, _, err := call("GET", "/admin/teams/:id/members", req{searchAdmin, Input{ID: "ads"}}); status(err) != 404 {
		t.Errorf("another team's members: got %v, want 404", err)
	}
	if _, err := patch(searchViewer, "search", `{"add":["usr_bob"]}`); status(err) != 403 {
		t.Errorf("a viewer adding a member: got %v, want 403", err)
	}
	if _, err := patch(searchAdmin, "ads", `{"remove":["usr_bob"]}`); status(err) != 404 {
		t.Errorf("a team_admin changing another team's members: got %v, want 404", err)
	}

	v, err := patch(searchAdmin, "search", `{"add":["usr_bob"],"remove":["usr_ann"]}`)
	if got := memberIDs(t, v, err); !slices.Equal(got, []string{"usr_bob"}) {
		t.Errorf("after the change: got %v, want [usr_bob]", got)
	}
	bob, _ := a.Users.User(ctx, "usr_bob")
	if !slices.Equal(bob.Teams, []string{"ads", "search"}) || bob.Role != auth.RoleViewer {
		t.Errorf("bob is %+v; want his other team and his role kept, search added", bob)
	}
	// Adding twice and removing an absent member change nothing.
	if v, err := patch(searchAdmin, "search", `{"add":["usr_bob"],"remove":["usr_ann"]}`); !slices.Equal(memberIDs(t, v, err), []string{"usr_bob"}) {
		t.Errorf("repeated: got %v", v)
	}
	// Refused, and nothing changed: an unknown user, an issuer's user, bad bodies.
	for _, c := range []struct {
		body string
		want int
	}{
		{`{"add":["usr_ann","usr_nobody"]}`, 404},
		{`{"add":["usr_ann","usr_sso"]}`, 409},
		{`{"add":[]}`, 400},
		{`{"add":["usr_ann"],"remove":["usr_ann"]}`, 400},
		{`{"add":[""]}`, 400},
		{`{"members":["usr_ann"]}`, 400},
		{`{"add":[` + strings.Repeat(`"usr_x",`, 64) + `"usr_x"]}`, 400},
	} {
		if _, err := patch(searchAdmin, "search", c.body); status(err) != c.want {
			t.Errorf("%s: got %v, want %d", c.body, err, c.want)
		}
	}
	if got := members(auth.Bootstrap, "search"); !slices.Equal(got, []string{"usr_bob"}) {
		t.Errorf("after the refusals: got %v, want [usr_bob] still", got)
	}

	// The audit log: who changed the members of which team, before and after.
	p, err := a.Audit.QueryAudit(ctx, logstore.AuditFilter{ResourceKind: "member"})
	if err != nil || len(p.Entries) != 2 {
		t.Fatalf("audit: got %+v, %v; want the two changes", p.Entries, err)
	}
	e := p.Entries[1] // the first change; newest first
	if e.User != "usr_ta" || e.Action != "PATCH /admin/teams/{id}/members" || e.ResourceID != "search" ||
		!strings.Contains(string(e.Before), "usr_ann") || strings.Contains(string(e.After), "usr_ann") || !strings.Contains(string(e.After), "usr_bob") {
		t.Errorf("audit entry %+v (before %s, after %s)", e, e.Before, e.After)
	}
}
