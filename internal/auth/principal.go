package auth

import "context"

// Role is what a caller of the admin API may do (issue 37): admin everything; team_admin
// their teams' keys, members, logs and usage; viewer read only, their teams; member their
// own keys and logs.
type Role string

// The roles, from most to least.
const (
	RoleAdmin     Role = "admin"
	RoleTeamAdmin Role = "team_admin"
	RoleViewer    Role = "viewer"
	RoleMember    Role = "member"
)

// Principal is who calls the admin API: the bootstrap admin token, a user's personal token
// or a console session. A *Principal in a context is shared: callers must not modify it.
type Principal struct {
	// User is the user's id; "admin" for the bootstrap admin token.
	User string `json:"user"`
	Role Role   `json:"role"`
	// Teams are the teams a team_admin, viewer or member acts in; empty for admin.
	Teams []string `json:"teams,omitempty"`
}

// Bootstrap is the principal of the single admin token of the configuration.
var Bootstrap = &Principal{User: "admin", Role: RoleAdmin}

type principalKey struct{}

// WithPrincipal returns ctx carrying p, for the admin API's handlers and its audit log.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal ctx carries, or nil.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}
