package admin

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/llm"
)

// TestKeyTeamPolicy: a key a non-admin makes or changes belongs to one of their teams, so
// the team's models, limits and budget hold over it (issue 37); a member's key out of every
// team escaped them. The 403 says why, and is asked before the team's existence (a member
// learns nothing of teams not theirs).
func TestKeyTeamPolicy(t *testing.T) {
	var (
		admin    = auth.Bootstrap
		ta       = &auth.Principal{User: "usr_ta", Role: auth.RoleTeamAdmin, Teams: []string{"search"}}
		viewer   = &auth.Principal{User: "usr_v", Role: auth.RoleViewer, Teams: []string{"search"}}
		member   = &auth.Principal{User: "usr_m", Role: auth.RoleMember, Teams: []string{"search"}}
		teamless = &auth.Principal{User: "usr_m", Role: auth.RoleMember}
	)
	const (
		noTeam  = "You belong to no team"
		theirs  = "must belong to one of your teams (search)"
		refused = "Your role does not allow this."
		lower   = "Only an admin may lower what the request log keeps"
	)
	for _, c := range []struct {
		name     string
		who      *auth.Principal
		method   string
		id, body string
		want     int
		msg      string // in the error's message
		team     string // the key's team after a change that passed
	}{
		{"admin creates without team", admin, "POST", "", `{"name":"x"}`, 201, "", ""},
		{"admin creates into any team", admin, "POST", "", `{"name":"x","team":"ads"}`, 201, "", "ads"},
		{"team_admin creates into their team", ta, "POST", "", `{"name":"x","team":"search"}`, 201, "", "search"},
		{"team_admin creates without team", ta, "POST", "", `{"name":"x"}`, 403, theirs, ""},
		{"team_admin creates with team null", ta, "POST", "", `{"name":"x","team":null}`, 403, theirs, ""},
		{"team_admin creates into another team", ta, "POST", "", `{"name":"x","team":"ads"}`, 403, theirs, ""},
		{"member creates into their team", member, "POST", "", `{"name":"x","models":["*"],"team":"search"}`, 201, "", "search"},
		{"member creates without team", member, "POST", "", `{"name":"x","models":["*"]}`, 403, theirs, ""},
		{"member creates with team null", member, "POST", "", `{"name":"x","team":null}`, 403, theirs, ""},
		{"member creates with team empty", member, "POST", "", `{"name":"x","team":""}`, 403, theirs, ""},
		{"member creates into another team", member, "POST", "", `{"name":"x","team":"ads"}`, 403, theirs, ""},
		{"member names a team that is not: 403, not 400", member, "POST", "", `{"name":"x","team":"nope"}`, 403, theirs, ""},
		{"member in no team creates", teamless, "POST", "", `{"name":"x"}`, 403, noTeam, ""},
		{"member in no team names a team", teamless, "POST", "", `{"name":"x","team":"search"}`, 403, noTeam, ""},
		{"viewer creates", viewer, "POST", "", `{"name":"x","team":"search"}`, 403, refused, ""},

		{"admin takes a key out of its team", admin, "PATCH", "key_search", `{"team":null}`, 200, "", ""},
		{"team_admin changes their team's key", ta, "PATCH", "key_search", `{"rpm":5}`, 200, "", "search"},
		{"team_admin takes a key out of its team", ta, "PATCH", "key_search", `{"team":null}`, 403, theirs, ""},
		{"team_admin moves a key into another team", ta, "PATCH", "key_search", `{"team":"ads"}`, 403, theirs, ""},
		{"member changes their key", member, "PATCH", "key_mine", `{"rpm":5,"models":["*"]}`, 200, "", "search"},
		{"member takes their key out of its team", member, "PATCH", "key_mine", `{"team":null}`, 403, theirs, ""},
		{"member empties their key's team", member, "PATCH", "key_mine", `{"team":""}`, 403, theirs, ""},
		{"member moves their key into another team", member, "PATCH", "key_mine", `{"team":"ads"}`, 403, theirs, ""},
		{"member changes a teamless key of theirs without a team", member, "PATCH", "key_loose", `{"rpm":5}`, 403, theirs, ""},
		{"member puts a teamless key of theirs into their team", member, "PATCH", "key_loose", `{"team":"search"}`, 200, "", "search"},
		{"member removed from every team changes their key", teamless, "PATCH", "key_mine", `{"rpm":5}`, 403, noTeam, ""},
		{"viewer changes their team's key", viewer, "PATCH", "key_search", `{"team":null}`, 403, refused, ""},

		// capture: asking for more is anyone's; only admin lowers what the log keeps.
		{"member creates with capture content", member, "POST", "", `{"name":"x","team":"search","capture":"content"}`, 201, "", "search"},
		{"member creates with capture metadata", member, "POST", "", `{"name":"x","team":"search","capture":"metadata"}`, 403, lower, ""},
		{"admin creates with capture metadata", admin, "POST", "", `{"name":"x","capture":"metadata"}`, 201, "", ""},
		{"member drops an admin's content capture", member, "PATCH", "key_recorded", `{"capture":""}`, 403, lower, ""},
		{"member sets their recorded key to metadata", member, "PATCH", "key_recorded", `{"capture":"metadata"}`, 403, lower, ""},
		{"member changes a recorded key, capture as it was", member, "PATCH", "key_recorded", `{"rpm":5,"capture":"content"}`, 200, "", "search"},
		{"team_admin sets a key to metadata", ta, "PATCH", "key_search", `{"capture":"metadata"}`, 403, lower, ""},
		{"admin sets a recorded key to metadata", admin, "PATCH", "key_recorded", `{"capture":"metadata"}`, 200, "", "search"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, ops := policyAPI(t)
			ctx := context.Background()
			// A member's key in their team, one made before keys needed a team, and one whose
			// requests an admin asked the log to keep whole.
			for _, k := range []*auth.Key{{ID: "key_mine", Owner: "usr_m", Team: "search"}, {ID: "key_loose", Owner: "usr_m"},
				{ID: "key_recorded", Owner: "usr_m", Team: "search", Capture: "content"}} {
				k.Hash, k.Models, k.CreatedAt = auth.Hash(k.ID), []string{"*"}, time.Now().UTC()
				if err := a.Keys.Store.Create(ctx, k); err != nil {
					t.Fatal(err)
				}
			}
			path := "/admin/keys"
			if c.id != "" {
				path += "/:id"
			}
			st, v, err := ops["call"](c.method, path, req{c.who, Input{ID: c.id, Body: []byte(c.body)}})
			if err != nil {
				st = status(err)
			}
			if st != c.want {
				t.Fatalf("got %d (%v), want %d", st, err, c.want)
			}
			if err != nil {
				var le *llm.Error
				if !errors.As(err, &le) || !strings.Contains(le.Message, c.msg) || le.Code != "forbidden" {
					t.Errorf("got %v, want code forbidden and a message with %q", err, c.msg)
				}
				return
			}
			got := ""
			if k := v.(Key); k.Team != nil {
				got = *k.Team
			}
			if got != c.team {
				t.Errorf("team: got %q, want %q", got, c.team)
			}
		})
	}
}
