package auth

import "slices"

// Verdict is the role policy's answer for one call of the admin API (issue 37). The policy
// lives here, once: the admin API asks it on every route, and the console calls the admin
// API, so both follow the same rules.
type Verdict int

const (
	// Allow: go on.
	Allow Verdict = iota
	// Forbid: 403. The caller may see what it asks about, or the route, but not do this.
	Forbid
	// Hide: 404. The resource is another team's (or user's): its existence is not told.
	Hide
)

// scoped are the admin API's routes a principal other than admin may call, and by whom
// (echo's path syntax; method and path as admin.API.Routes names them). Every other route
// is config-wide (the cache, statistics, health, users' management): admin only. A route is
// only the first gate: the resource's team and owner decide next (Reach, Into, SeesKey).
var scoped = map[string][]Role{
	"GET /admin/keys":        {RoleTeamAdmin, RoleViewer, RoleMember},
	"POST /admin/keys":       {RoleTeamAdmin, RoleMember},
	"GET /admin/keys/:id":    {RoleTeamAdmin, RoleViewer, RoleMember},
	"PATCH /admin/keys/:id":  {RoleTeamAdmin, RoleMember},
	"DELETE /admin/keys/:id": {RoleTeamAdmin, RoleMember},

	"GET /admin/logs":        {RoleTeamAdmin, RoleViewer, RoleMember},
	"GET /admin/logs/export": {RoleTeamAdmin, RoleViewer, RoleMember},
	"GET /admin/logs/tail":   {RoleTeamAdmin, RoleViewer, RoleMember},
	"GET /admin/logs/:id":    {RoleTeamAdmin, RoleViewer, RoleMember},
	"GET /admin/usage":       {RoleTeamAdmin, RoleViewer, RoleMember},

	// Their own teams (team_admin, viewer: others are a 404), and their members; a
	// team_admin adds and removes members. A team's limits, budgets, model and MCP access,
	// and teams' creation and deletion, stay admin only (issue 37).
	"GET /admin/teams":               {RoleTeamAdmin, RoleViewer},
	"GET /admin/teams/:id":           {RoleTeamAdmin, RoleViewer},
	"GET /admin/teams/:id/members":   {RoleTeamAdmin, RoleViewer},
	"PATCH /admin/teams/:id/members": {RoleTeamAdmin},

	// The members of their teams (team_admin, viewer), or themselves; their own tokens.
	"GET /admin/users":                      {RoleTeamAdmin, RoleViewer},
	"GET /admin/users/:id":                  {RoleTeamAdmin, RoleViewer, RoleMember},
	"GET /admin/users/:id/tokens":           {RoleTeamAdmin, RoleViewer, RoleMember},
	"POST /admin/users/:id/tokens":          {RoleTeamAdmin, RoleMember},
	"DELETE /admin/users/:id/tokens/:token": {RoleTeamAdmin, RoleMember},
}

// Route is the verdict on p calling method route at all, before any resource is read. A
// nil principal (no authentication ran) is refused: the policy fails closed.
func Route(p *Principal, method, route string) Verdict {
	switch {
	case p == nil:
		return Forbid
	case p.Role == RoleAdmin:
		return Allow
	case slices.Contains(scoped[method+" "+route], p.Role):
		return Allow
	}
	return Forbid
}

// Resource is what a route acts on, as the policy needs it: the teams it belongs to (a
// key's one team; a user's teams) and its owner (the user who made a key; a user is their
// own owner).
type Resource struct {
	Teams []string
	Owner string
}

// KeyResource is the resource of a key: its team and its owner.
func KeyResource(k *Key) Resource {
	r := Resource{Owner: k.Owner}
	if k.Team != "" {
		r.Teams = []string{k.Team}
	}
	return r
}

// TeamResource is the resource of a team: itself, which no user owns.
func TeamResource(name string) Resource { return Resource{Teams: []string{name}} }

// Sees reports whether p may know that r exists: admin sees all; team_admin and viewer what
// belongs to one of their teams, and their own; member their own only.
func Sees(p *Principal, r Resource) bool {
	switch {
	case p == nil:
		return false
	case p.Role == RoleAdmin, r.Owner != "" && r.Owner == p.User:
		return true
	case p.Role == RoleTeamAdmin, p.Role == RoleViewer:
		return slices.ContainsFunc(r.Teams, func(t string) bool { return slices.Contains(p.Teams, t) })
	}
	return false
}

// Reach is the verdict on p reading (GET, HEAD) or changing (any other method) r, which
// exists: Hide what p does not see; a viewer changes nothing; a member changes their own
// only; a team_admin their teams' and their own.
func Reach(p *Principal, method string, r Resource) Verdict {
	switch {
	case !Sees(p, r):
		return Hide
	case method == "GET" || method == "HEAD", p.Role == RoleAdmin:
		return Allow
	case p.Role == RoleViewer:
		return Forbid
	case r.Owner != "" && r.Owner == p.User:
		return Allow
	case p.Role == RoleTeamAdmin && slices.ContainsFunc(r.Teams, func(t string) bool { return slices.Contains(p.Teams, t) }):
		return Allow
	}
	return Forbid
}

// Into is the verdict on p putting a key into team (creating it there, or moving it, "":
// none): admin anywhere, or nowhere; a team_admin or a member only into one of their teams,
// never into none, since a request must pass the key's team's models, limits and budget and
// a teamless key has none: a member's key out of every team escaped them all (issue 37). A
// non-admin in no team therefore makes no key. A viewer never.
func Into(p *Principal, team string) Verdict {
	switch {
	case p == nil:
		return Forbid
	case p.Role == RoleAdmin:
		return Allow
	case p.Role != RoleTeamAdmin && p.Role != RoleMember:
		return Forbid
	case team != "" && slices.Contains(p.Teams, team):
		return Allow
	}
	return Forbid
}

// Tokens is the verdict on p reading or changing the personal tokens of user u: anyone's
// for admin, one's own for the others (a team_admin sees their members, not their secrets'
// names); what p may not even see is hidden.
func Tokens(p *Principal, method string, u *User) Verdict {
	r := Resource{Teams: u.Teams, Owner: u.ID}
	if v := Reach(p, "GET", r); v != Allow {
		return v
	}
	if p.Role == RoleAdmin || u.ID == p.User {
		if method != "GET" && p.Role == RoleViewer {
			return Forbid
		}
		return Allow
	}
	return Forbid
}

// Unscoped reports whether p sees every record and key (admin): the others' lists are
// filtered through Sees.
func Unscoped(p *Principal) bool { return p != nil && p.Role == RoleAdmin }

// Member is the verdict on p adding user u to team, or removing u from it (add false),
// once p may change team's members (Reach on the team): admin anyone; a team_admin only a
// user whose every team is one they administer (a user in no team included), so that a
// team_admin never pulls another team's user into theirs nor learns that the user exists
// (issue 47: admin alone moves users between teams). A team_admin also removes from team
// a member of it, whatever their other teams: that changes team only, which they
// administer. Anything else is hidden (404, as no user): the answer must not tell a
// foreign user from an unknown id.
func Member(p *Principal, u *User, team string, add bool) Verdict {
	switch {
	case p == nil:
		return Forbid
	case p.Role == RoleAdmin:
		return Allow
	case p.Role != RoleTeamAdmin:
		return Forbid
	case !slices.ContainsFunc(u.Teams, func(t string) bool { return !slices.Contains(p.Teams, t) }):
		return Allow // all of u's teams are p's
	case !add && slices.Contains(u.Teams, team) && slices.Contains(p.Teams, team):
		return Allow
	}
	return Hide
}
