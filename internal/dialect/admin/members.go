package admin

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/llm"
)

// A team's members are the users whose teams name it (auth.User.Teams): the team holds no
// list of its own, so a user's teams and a team's members cannot disagree. A team_admin
// manages their teams' members (issue 37: "their teams' keys, members, logs and usage"):
// they add and remove a user of a team of theirs, and change nothing else of the user (not
// their role, not their other teams); a team's limits, budgets and access stay admin only.
// A team_admin names only users of their own teams, or of none (auth.Member): admin alone
// moves a user between teams (issue 47).

// Members is a team's members as GET and PATCH /admin/teams/{id}/members answer them.
type Members struct {
	Object string `json:"object"` // team.members
	// ID is the team's: the audit log names the team a change of its members is about.
	ID   string `json:"id"`
	Data []User `json:"data"`
}

// maxMemberChange bounds one change of members: a team's roster is edited by hand.
const maxMemberChange = 64

// Members serves GET /admin/teams/{id}/members: the users of the team, in the users'
// order (creation time, then id).
func (ts Teams) Members(ctx context.Context, id string, _ []byte) (int, any, error) {
	t, err := ts.team(ctx, http.MethodGet, id)
	if err != nil {
		return 0, nil, err
	}
	m, err := ts.members(ctx, t.Name)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, m, nil
}

func (ts Teams) members(ctx context.Context, team string) (Members, error) {
	us, err := ts.Users.ListUsers(ctx)
	if err != nil {
		return Members{}, userError(err)
	}
	m := Members{Object: "team.members", ID: team, Data: []User{}}
	for _, u := range us {
		if slices.Contains(u.Teams, team) {
			m.Data = append(m.Data, encodeUser(u))
		}
	}
	return m, nil
}

// MemberChange is the body of PATCH /admin/teams/{id}/members: the ids of the users to add
// to the team and to remove from it.
type MemberChange struct {
	Add    []string `json:"add"`
	Remove []string `json:"remove"`
}

// PatchMembers serves PATCH /admin/teams/{id}/members {"add": [user ids], "remove": [user
// ids]} and answers the members after the change. Every user named must exist and be one
// the caller may move (auth.Member: for a team_admin, a user of their teams only, or of
// none; 404 user_not_found otherwise, the same answer as an unknown id, nothing changed)
// and must not be one whose teams come from their OpenID
// provider (409 user_from_issuer: the issuer sets them again at every sign-in, so a change
// here would not last). Each user is then changed on its own, atomically (the users' store
// compares and sets): a store failure half-way leaves the users before it changed, and the
// call may be repeated, adding a member twice or removing an absent one changing nothing.
func (ts Teams) PatchMembers(ctx context.Context, id string, body []byte) (int, any, error) {
	t, err := ts.team(ctx, http.MethodPatch, id)
	if err != nil {
		return 0, nil, err
	}
	var in MemberChange
	if err := decodeStrict(body, &in, "add and remove (user ids)"); err != nil {
		return 0, nil, err
	}
	if len(in.Add)+len(in.Remove) == 0 || len(in.Add)+len(in.Remove) > maxMemberChange {
		return 0, nil, Bad("add", "add and remove name 1 to 64 user ids in all.")
	}
	for _, uid := range append(slices.Clone(in.Add), in.Remove...) {
		if uid == "" || len(uid) > 256 {
			return 0, nil, Bad("add", "A user id is 1 to 256 bytes.")
		}
	}
	for _, uid := range in.Add {
		if slices.Contains(in.Remove, uid) {
			return 0, nil, Bad("remove", "The user '"+uid+"' is both added and removed.")
		}
	}
	p := auth.PrincipalFrom(ctx)
	// refused is the answer to a user the caller may not name: the same bytes for one of
	// another team as for an unknown id, so that ids cannot be probed (issue 47).
	refused := func(uid, param string) error {
		return &llm.Error{Kind: llm.NotFound, Code: "user_not_found", Type: "invalid_request_error", Param: param,
			Message: "No user with the id '" + uid + "'."}
	}
	check := func(u *auth.User, add bool, param string) error {
		if err := verdict(auth.Member(p, u, t.Name, add), refused(u.ID, param)); err != nil {
			return err
		}
		if u.Source == auth.SourceOIDC {
			return &llm.Error{Kind: llm.Invalid, Status: http.StatusConflict, Code: "user_from_issuer", Type: "invalid_request_error",
				Param: param, Message: "The teams of user '" + u.ID + "' come from their OpenID provider's groups at every sign-in: change them there."}
		}
		return nil
	}
	for i, uid := range append(slices.Clone(in.Add), in.Remove...) { // all checked before any changes
		add, param := i < len(in.Add), "add"
		if !add {
			param = "remove"
		}
		u, err := ts.Users.User(ctx, uid)
		if errors.Is(err, auth.ErrNoUser) {
			return 0, nil, refused(uid, param)
		} else if err != nil {
			return 0, nil, userError(err)
		}
		if err := check(u, add, param); err != nil {
			return 0, nil, err
		}
	}
	// Each change checks the user again as it stands in the store, atomically with it: an
	// admin adding them to another team meanwhile makes them another team's user.
	change := func(uid, param string, fn func(teams []string) []string) error {
		_, err := ts.Users.UpdateUser(ctx, uid, func(u *auth.User) error {
			if err := check(u, param == "add", param); err != nil {
				return err
			}
			u.Teams = fn(u.Teams)
			if len(u.Teams) > 64 {
				return Bad("add", "The user '"+uid+"' is in 64 teams already.")
			}
			return nil
		})
		return err
	}
	for _, uid := range in.Add {
		if err := change(uid, "add", func(teams []string) []string {
			if slices.Contains(teams, t.Name) {
				return teams
			}
			return append(teams, t.Name)
		}); err != nil {
			return 0, nil, userError(err)
		}
	}
	for _, uid := range in.Remove {
		if err := change(uid, "remove", func(teams []string) []string {
			return slices.DeleteFunc(teams, func(n string) bool { return n == t.Name })
		}); err != nil {
			return 0, nil, userError(err)
		}
	}
	m, err := ts.members(ctx, t.Name)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, m, nil
}
