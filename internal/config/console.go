package config

import (
	"fmt"
	"net/url"
	"regexp"

	"github.com/sluice-gw/sluice/internal/auth"
)

// Console is the operator console's sign-in: OpenID Connect issuers beside the admin token.
type Console struct {
	OIDC []OIDC `yaml:"oidc"`
}

// OIDC is an OpenID Connect issuer the console signs in with (authorization code and PKCE).
type OIDC struct {
	// Name names the issuer in the console's paths: /console/oidc/NAME/login and callback.
	Name         string   `yaml:"name"`
	Issuer       string   `yaml:"issuer"`
	ClientID     string   `yaml:"client_id"`
	ClientSecret string   `yaml:"client_secret"` // ${ENV} keeps it out of the file
	RedirectURL  string   `yaml:"redirect_url"`  // https://gateway/console/oidc/NAME/callback
	Scopes       []string `yaml:"scopes"`        // besides openid; default email, profile, groups
	GroupsClaim  string   `yaml:"groups_claim"`  // default groups
	// Roles map the claim's groups to roles and teams; DefaultRole is the role of a user
	// whose groups match none ("": the sign-in is refused), DefaultTeam their team. A
	// team_admin's or member's key must belong to one of their teams (issue 37): without a
	// team, a user signed in by default_role alone makes no key.
	Roles       []RoleMap `yaml:"roles"`
	DefaultRole string    `yaml:"default_role"`
	DefaultTeam string    `yaml:"default_team"`
}

// RoleMap gives the members of Group a role, in Team for team_admin, viewer and member.
type RoleMap struct {
	Group string `yaml:"group"`
	Role  string `yaml:"role"`
	Team  string `yaml:"team"`
}

var oidcName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

func (v *validator) console(c Console) {
	seen := map[string]bool{}
	for i, o := range c.OIDC {
		path := fmt.Sprintf("console.oidc[%d]", i)
		if !oidcName.MatchString(o.Name) {
			v.errorf(path+".name", "want 1 to 64 of a-z, 0-9, _ and - (it names the issuer's paths)")
		} else if seen[o.Name] {
			v.errorf(path+".name", "name %q used twice", o.Name)
		}
		seen[o.Name] = true
		v.httpURL(path+".issuer", o.Issuer)
		v.httpURL(path+".redirect_url", o.RedirectURL)
		if u, err := url.Parse(o.RedirectURL); err == nil && u.Path != "/console/oidc/"+o.Name+"/callback" {
			v.errorf(path+".redirect_url", "want the path /console/oidc/%s/callback", o.Name)
		}
		if o.ClientID == "" {
			v.errorf(path+".client_id", "missing")
		}
		if o.DefaultRole != "" && !oneOf(o.DefaultRole, "admin", "team_admin", "viewer", "member") {
			v.errorf(path+".default_role", "want admin, team_admin, viewer or member")
		}
		switch {
		case o.DefaultTeam == "":
		case o.DefaultRole == "" || o.DefaultRole == "admin":
			v.errorf(path+".default_team", "want default_role team_admin, viewer or member with it (an admin acts in every team)")
		case !auth.ValidTeamName(o.DefaultTeam):
			v.errorf(path+".default_team", "want a team's name: 1 to 64 of a-z, 0-9, '.', '_' and '-', starting with a letter or digit")
		}
		if len(o.Roles) == 0 && o.DefaultRole == "" {
			v.errorf(path+".roles", "map at least one group to a role (or set default_role)")
		}
		for j, m := range o.Roles {
			rp := fmt.Sprintf("%s.roles[%d]", path, j)
			switch {
			case m.Group == "":
				v.errorf(rp+".group", "missing")
			case !oneOf(m.Role, "admin", "team_admin", "viewer", "member"):
				v.errorf(rp+".role", "want admin, team_admin, viewer or member")
			case m.Role == "team_admin" && m.Team == "":
				v.errorf(rp+".team", "a team_admin administers a team: name it")
			}
		}
	}
}
