package admin

import (
	"context"
	"encoding/json"
	"fmt"
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
	mk("usr_cy", auth.RoleViewer, auth.SourceAPI) // in no team yet
	mk("usr_sso", auth.RoleMember, auth.SourceOIDC)
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
	if _, err := patch(searchViewer, "search", `{"add":["usr_cy"]}`); status(err) != 403 {
		t.Errorf("a viewer adding a member: got %v, want 403", err)
	}
	if _, err := patch(searchAdmin, "ads", `{"remove":["usr_bob"]}`); status(err) != 404 {
		t.Errorf("a team_admin changing another team's members: got %v, want 404", err)
	}

	v, err := patch(searchAdmin, "search", `{"add":["usr_cy"],"remove":["usr_ann"]}`)
	if got := memberIDs(t, v, err); !slices.Equal(got, []string{"usr_cy"}) {
		t.Errorf("after the change: got %v, want [usr_cy]", got)
	}
	cy, _ := a.Users.User(ctx, "usr_cy")
	if !slices.Equal(cy.Teams, []string{"search"}) || cy.Role != auth.RoleViewer {
		t.Errorf("cy is %+v; want their role kept, search added", cy)
	}
	// Adding twice and removing an absent member change nothing.
	if v, err := patch(searchAdmin, "search", `{"add":["usr_cy"],"remove":["usr_ann"]}`); !slices.Equal(memberIDs(t, v, err), []string{"usr_cy"}) {
		t.Errorf("repeated: got %v", v)
	}
	// Refused, and nothing changed: an unknown user, another team's, an issuer's user, bad
	// bodies.
	for _, c := range []struct {
		body string
		want int
	}{
		{`{"add":["usr_ann","usr_nobody"]}`, 404},
		{`{"add":["usr_ann","usr_bob"]}`, 404},
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
	if got := members(auth.Bootstrap, "search"); !slices.Equal(got, []string{"usr_cy"}) {
		t.Errorf("after the refusals: got %v, want [usr_cy] still", got)
	}

	// The audit log: who changed the members of which team, before and after.
	p, err := a.Audit.QueryAudit(ctx, logstore.AuditFilter{ResourceKind: "member"})
	if err != nil || len(p.Entries) != 2 {
		t.Fatalf("audit: got %+v, %v; want the two changes", p.Entries, err)
	}
	e := p.Entries[1] // the first change; newest first
	if e.User != "usr_ta" || e.Action != "PATCH /admin/teams/{id}/members" || e.ResourceID != "search" ||
		!strings.Contains(string(e.Before), "usr_ann") || strings.Contains(string(e.After), "usr_ann") || !strings.Contains(string(e.After), "usr_cy") {
		t.Errorf("audit entry %+v (before %s, after %s)", e, e.Before, e.After)
	}
}

// Issue 47, finding 1: a team_admin cannot pull another team's user into their team, nor
// tell such a user from an unknown id: both are the same 404, and the user's teams stay
// as they were. A user in one of their teams and another (put there by admin) may still be
// removed from theirs; admin alone moves a user between teams.
func TestTeamAdminMovesNoForeignUser(t *testing.T) {
	a, ops := policyAPI(t)
	call := ops["call"]
	ctx := context.Background()
	for _, u := range []*auth.User{
		{ID: "usr_bob", Role: auth.RoleMember, Teams: []string{"ads"}, Source: auth.SourceAPI},
		{ID: "usr_sso", Role: auth.RoleMember, Teams: []string{"ads"}, Source: auth.SourceOIDC},
		{ID: "usr_dee", Role: auth.RoleMember, Teams: []string{"search", "ads"}, Source: auth.SourceAPI},
	} {
		if err := a.Users.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	patch := func(p *auth.Principal, body string) error {
		_, _, err := call("PATCH", "/admin/teams/:id/members", req{p, Input{ID: "search", Body: []byte(body)}})
		return err
	}
	// answer is the refusal with the id the caller named taken out: what tells one refusal
	// from another.
	answer := func(err error, id string) string {
		b, _ := json.Marshal(err)
		return fmt.Sprintf("%d %s %s", status(err), strings.ReplaceAll(err.Error(), id, "ID"), strings.ReplaceAll(string(b), id, "ID"))
	}
	for _, list := range []string{"add", "remove"} {
		unknown := patch(searchAdmin, `{"`+list+`":["usr_nobody"]}`)
		if status(unknown) != 404 {
			t.Fatalf("%s an unknown id: got %v, want 404", list, unknown)
		}
		for _, id := range []string{"usr_bob", "usr_sso"} {
			err := patch(searchAdmin, `{"`+list+`":["`+id+`"]}`)
			if err == nil || answer(err, id) != answer(unknown, "usr_nobody") {
				t.Errorf("%s %s of ads: got %v, want the unknown id's answer %v", list, id, err, unknown)
			}
		}
		if err := patch(searchAdmin, `{"`+list+`":["usr_dee"]}`); (list == "add") != (status(err) == 404) {
			t.Errorf("%s usr_dee, of search and ads: got %v; want a 404 to add (another team's too), and a removal from search", list, err)
		}
	}
	for id, want := range map[string][]string{"usr_bob": {"ads"}, "usr_sso": {"ads"}, "usr_dee": {"ads"}} {
		if u, _ := a.Users.User(ctx, id); !slices.Equal(u.Teams, want) {
			t.Errorf("%s's teams: got %v, want %v", id, u.Teams, want)
		}
	}
	// The admin moves bob; a team_admin of both teams may too.
	if err := patch(auth.Bootstrap, `{"add":["usr_bob"]}`); err != nil {
		t.Fatal(err)
	}
	both := &auth.Principal{User: "usr_tb", Role: auth.RoleTeamAdmin, Teams: []string{"search", "ads"}}
	if err := patch(both, `{"add":["usr_dee"]}`); err != nil {
		t.Errorf("a team_admin of both teams adding dee: %v", err)
	}
	if u, _ := a.Users.User(ctx, "usr_bob"); !slices.Equal(u.Teams, []string{"ads", "search"}) {
		t.Errorf("bob's teams after the admin's change: got %v", u.Teams)
	}
}
