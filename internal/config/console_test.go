package config

import "testing"

// oidcIssuer is a console.oidc issuer with the members extra adds.
func oidcIssuer(extra string) string {
	return `auth: {admin_token: t0ken}
console:
  oidc:
    - {name: corp, issuer: "https://idp.example.com", client_id: sluice, redirect_url: "https://gw.example.com/console/oidc/corp/callback", ` + extra + `}
`
}

func TestOIDCDefaultTeam(t *testing.T) {
	c := mustParse(t, oidcIssuer("default_role: member, default_team: search"), env())
	if o := c.Console.OIDC[0]; o.DefaultRole != "member" || o.DefaultTeam != "search" {
		t.Errorf("got %+v, want default_role member in default_team search", o)
	}
	tests := []struct {
		name, src, want string
	}{
		{"without default_role", oidcIssuer("roles: [{group: g, role: member}], default_team: search"),
			"console.oidc[0].default_team: want default_role team_admin, viewer or member with it"},
		{"with admin", oidcIssuer("default_role: admin, default_team: search"),
			"console.oidc[0].default_team: want default_role team_admin, viewer or member with it"},
		{"bad name", oidcIssuer("default_role: member, default_team: 'Search Team'"),
			"console.oidc[0].default_team: want a team's name"},
		{"a list", oidcIssuer("default_role: member, default_team: [search]"), "default_team"},
		{"misspelt", oidcIssuer("default_role: member, default_teams: [search]"), "default_teams"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkErr(t, tt.src, tt.want) })
	}
}
