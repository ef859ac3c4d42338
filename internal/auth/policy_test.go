package auth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

var (
	ta     = &Principal{User: "usr_ta", Role: RoleTeamAdmin, Teams: []string{"search"}}
	viewer = &Principal{User: "usr_v", Role: RoleViewer, Teams: []string{"search"}}
	member = &Principal{User: "usr_m", Role: RoleMember, Teams: []string{"search"}}
)

func TestRoute(t *testing.T) {
	for _, c := range []struct {
		p             *Principal
		method, route string
		want          Verdict
	}{
		{Bootstrap, "DELETE", "/admin/cache", Allow},
		{nil, "GET", "/admin/keys", Forbid}, // fails closed
		{ta, "DELETE", "/admin/cache", Forbid},
		{ta, "GET", "/admin/stats", Forbid},
		{ta, "GET", "/admin/health", Forbid},
		{ta, "POST", "/admin/users", Forbid},
		{ta, "POST", "/admin/keys", Allow},
		{ta, "GET", "/admin/logs", Allow},
		{viewer, "GET", "/admin/keys", Allow},
		{viewer, "POST", "/admin/keys", Forbid},
		{viewer, "PATCH", "/admin/keys/:id", Forbid},
		{viewer, "DELETE", "/admin/keys/:id", Forbid},
		{viewer, "POST", "/admin/users/:id/tokens", Forbid},
		{member, "GET", "/admin/users", Forbid},
		{member, "PATCH", "/admin/keys/:id", Allow},
		// Teams: their own read by team_admin and viewer; members changed by a team_admin;
		// the team itself by admin only.
		{ta, "GET", "/admin/teams", Allow},
		{viewer, "GET", "/admin/teams/:id", Allow},
		{viewer, "GET", "/admin/teams/:id/members", Allow},
		{ta, "PATCH", "/admin/teams/:id/members", Allow},
		{viewer, "PATCH", "/admin/teams/:id/members", Forbid},
		{ta, "PATCH", "/admin/teams/:id", Forbid},
		{ta, "POST", "/admin/teams", Forbid},
		{ta, "DELETE", "/admin/teams/:id", Forbid},
		{member, "GET", "/admin/teams", Forbid},
		{ta, "GET", "/admin/audit", Forbid},
		{&Principal{User: "x", Role: "root"}, "GET", "/admin/keys", Forbid}, // an unknown role
	} {
		if got := Route(c.p, c.method, c.route); got != c.want {
			t.Errorf("%v %s %s: got %v, want %v", c.p, c.method, c.route, got, c.want)
		}
	}
}

func TestReach(t *testing.T) {
	search := Resource{Teams: []string{"search"}}
	ads := Resource{Teams: []string{"ads"}}
	mine := Resource{Owner: "usr_m"}
	for _, c := range []struct {
		name   string
		p      *Principal
		method string
		r      Resource
		want   Verdict
	}{
		{"admin changes another team's", Bootstrap, "DELETE", ads, Allow},
		{"team_admin reads their team's", ta, "GET", search, Allow},
		{"team_admin changes their team's", ta, "PATCH", search, Allow},
		{"team_admin, another team's: hidden", ta, "GET", ads, Hide},
		{"team_admin, another team's change: hidden", ta, "DELETE", ads, Hide},
		{"team_admin, a member's teamless key: hidden", ta, "GET", mine, Hide},
		{"viewer reads their team's", viewer, "GET", search, Allow},
		{"viewer changes: forbidden", viewer, "PATCH", search, Forbid},
		{"viewer, another team's: hidden", viewer, "GET", ads, Hide},
		{"member, own", member, "DELETE", mine, Allow},
		{"member, their team's: hidden", member, "GET", search, Hide},
		{"member, another's", member, "GET", Resource{Owner: "usr_x", Teams: []string{"search"}}, Hide},
	} {
		if got := Reach(c.p, c.method, c.r); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	// Tokens: one's own, not a teammate's (403: they see the user), not a stranger's (404).
	self := &User{ID: "usr_ta", Teams: []string{"search"}}
	mate := &User{ID: "usr_m", Teams: []string{"search"}}
	stranger := &User{ID: "usr_z", Teams: []string{"ads"}}
	if Tokens(ta, "POST", self) != Allow || Tokens(ta, "GET", mate) != Forbid || Tokens(ta, "GET", stranger) != Hide ||
		Tokens(Bootstrap, "DELETE", stranger) != Allow || Tokens(viewer, "POST", &User{ID: "usr_v", Teams: []string{"search"}}) != Forbid {
		t.Error("Tokens: want own only (viewer: read), admin all, strangers hidden")
	}
}

// TestInto: a key a non-admin makes or moves lands in one of their teams, never in none
// (the team's models, limits and budget must hold over it); admin puts it anywhere.
func TestInto(t *testing.T) {
	loner := &Principal{User: "usr_l", Role: RoleMember}
	lonerTA := &Principal{User: "usr_lt", Role: RoleTeamAdmin}
	for _, c := range []struct {
		name string
		p    *Principal
		team string
		want Verdict
	}{
		{"admin, any team", Bootstrap, "ads", Allow},
		{"admin, no team", Bootstrap, "", Allow},
		{"team_admin, their team", ta, "search", Allow},
		{"team_admin, another team", ta, "ads", Forbid},
		{"team_admin, no team", ta, "", Forbid},
		{"team_admin in no team", lonerTA, "", Forbid},
		{"member, their team", member, "search", Allow},
		{"member, another team", member, "ads", Forbid},
		{"member, no team: out of the team's budget", member, "", Forbid},
		{"member in no team", loner, "", Forbid},
		{"member in no team, a team named", loner, "search", Forbid},
		{"viewer, their team", viewer, "search", Forbid},
		{"viewer, no team", viewer, "", Forbid},
		{"no principal", nil, "search", Forbid},
		{"an unknown role", &Principal{User: "x", Role: "root", Teams: []string{"search"}}, "search", Forbid},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Into(c.p, c.team); got != c.want {
				t.Errorf("Into(%q): got %v, want %v", c.team, got, c.want)
			}
		})
	}
}

func TestPersonalTokens(t *testing.T) {
	ctx := context.Background()
	us := &UserMemory{}
	now := time.Now()
	u := &User{ID: NewUserID(), Role: RoleTeamAdmin, Teams: []string{"search"}, Source: SourceAPI}
	if err := us.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	tok, secret := NewUserToken(u.ID, "ci", now, now.Add(time.Hour))
	if err := us.CreateToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if tok.Hash == secret || tok.Hash != Hash(secret) || len(secret) < len(UserPrefix)+40 || secret[:len(UserPrefix)] != UserPrefix {
		t.Fatalf("token %+v: want the SHA-256 of a %s... secret stored", tok, UserPrefix)
	}
	a := NewAdmins("admin-secret", us)
	p, err := a.Principal(ctx, secret, now)
	if err != nil || p.User != u.ID || p.Role != RoleTeamAdmin || p.Teams[0] != "search" {
		t.Fatalf("got %+v, %v; want the user's principal", p, err)
	}
	if p, err := a.Principal(ctx, "admin-secret", now); err != nil || p != Bootstrap {
		t.Fatalf("admin token: got %+v, %v", p, err)
	}
	// A role changed applies at the next call.
	if _, err := us.UpdateUser(ctx, u.ID, func(u *User) error { u.Role = RoleViewer; return nil }); err != nil {
		t.Fatal(err)
	}
	if p, _ := a.Principal(ctx, secret, now); p.Role != RoleViewer {
		t.Fatalf("got %s, want viewer after the change", p.Role)
	}
	// Expired, wrong, revoked, and a deleted user's.
	if _, err := a.Principal(ctx, secret, now.Add(time.Hour)); !errors.Is(err, ErrExpired) {
		t.Errorf("at its expiry: got %v, want ErrExpired", err)
	}
	if _, err := a.Principal(ctx, secret+"x", now); !errors.Is(err, ErrInvalid) {
		t.Errorf("a wrong token: got %v, want ErrInvalid", err)
	}
	if err := us.DeleteToken(ctx, "usr_other", tok.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("another user's token deleted: %v", err)
	}
	if err := us.DeleteToken(ctx, u.ID, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Principal(ctx, secret, now); !errors.Is(err, ErrInvalid) {
		t.Errorf("revoked: got %v, want ErrInvalid", err)
	}
	tok2, secret2 := NewUserToken(u.ID, "", now, now.Add(time.Hour))
	_ = us.CreateToken(ctx, tok2)
	_ = us.DeleteUser(ctx, u.ID)
	if _, err := a.Principal(ctx, secret2, now); !errors.Is(err, ErrInvalid) {
		t.Errorf("a deleted user's token: got %v, want ErrInvalid", err)
	}
	if !Refused(ErrExpired) || Refused(errors.New("redis down")) {
		t.Error("Refused: the caller's errors only")
	}
}

// TestMember: a team_admin adds or removes only users whose every team is theirs (or who
// are in none), and removes a member of their team whatever else they are in; anything
// else is hidden, as no user; admin moves anyone (issue 47).
func TestMember(t *testing.T) {
	u := func(teams ...string) *User { return &User{ID: "usr_x", Teams: teams} }
	both := &Principal{User: "usr_tb", Role: RoleTeamAdmin, Teams: []string{"search", "ads"}}
	for _, c := range []struct {
		name string
		p    *Principal
		u    *User
		add  bool
		want Verdict
	}{
		{"admin, another team's user", Bootstrap, u("ads"), true, Allow},
		{"team_admin, a user in no team", ta, u(), true, Allow},
		{"team_admin, their team's user", ta, u("search"), true, Allow},
		{"team_admin, another team's user", ta, u("ads"), true, Hide},
		{"team_admin, removing another team's user", ta, u("ads"), false, Hide},
		{"team_admin, a user of theirs and another's", ta, u("search", "ads"), true, Hide},
		{"team_admin, removing a user of theirs and another's", ta, u("search", "ads"), false, Allow},
		{"team_admin of both teams", both, u("ads"), true, Allow},
		{"viewer", viewer, u(), true, Forbid},
		{"member", member, u("search"), false, Forbid},
		{"no principal", nil, u(), true, Forbid},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Member(c.p, c.u, "search", c.add); got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

// FuzzOtherTeams: whatever the teams and ids, a caller other than admin never reaches what
// belongs to teams none of theirs and to another user (Hide on every method, as no such
// thing: no existence oracle), never sees it, never names its user in a change of members
// nor reads their tokens, and never puts a key into such a team (issue 47).
func FuzzOtherTeams(f *testing.F) {
	f.Add("search", "ads", "usr_a", "usr_b", uint8(0))
	f.Add("", "x", "", "usr_b", uint8(1))
	f.Add("a", "a\x00", "usr_a", "usr_a ", uint8(2))
	f.Fuzz(func(t *testing.T, mine, theirs, me, them string, role uint8) {
		if mine == theirs || me == them || them == "" {
			return // the same team or user: not another's
		}
		roles := []Role{RoleTeamAdmin, RoleViewer, RoleMember, Role("root"), ""}
		p := &Principal{User: me, Role: roles[int(role)%len(roles)], Teams: []string{mine}}
		r := Resource{Teams: []string{theirs}, Owner: them}
		u := &User{ID: them, Teams: []string{theirs}}
		for _, m := range []string{"GET", "HEAD", "POST", "PATCH", "PUT", "DELETE"} {
			if v := Reach(p, m, r); v != Hide {
				t.Errorf("%s %s of team %q: got %v, want Hide", p.Role, m, theirs, v)
			}
			if v := Tokens(p, m, u); v != Hide {
				t.Errorf("%s %s of %q's tokens: got %v, want Hide", p.Role, m, them, v)
			}
		}
		if Sees(p, r) || Into(p, theirs) == Allow || Member(p, u, mine, true) == Allow || Member(p, u, mine, false) == Allow {
			t.Errorf("%s of %q: sees, puts a key into or moves a user of %q", p.Role, mine, theirs)
		}
	})
}

// downUsers is a users' store that does not answer.
type downUsers struct{ UserMemory }

var errStoreDown = errors.New("redis down")

func (*downUsers) User(context.Context, string) (*User, error) { return nil, errStoreDown }
func (*downUsers) TokenByHash(context.Context, string) (*UserToken, error) {
	return nil, errStoreDown
}

// A console session acts for its user as the store has them now, and ends (ErrInvalid) when
// they are deleted, their role changed, or the token it was signed in with is revoked,
// expired or another user's (issue 47).
func TestSessionPrincipal(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	us := &UserMemory{}
	ann := &User{ID: "usr_ann", Role: RoleTeamAdmin, Teams: []string{"search"}, Source: SourceAPI}
	bob := &User{ID: "usr_bob", Role: RoleViewer, Teams: []string{"ads"}, Source: SourceAPI}
	for _, u := range []*User{ann, bob} {
		if err := us.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	live, _ := NewUserToken(ann.ID, "live", now, now.Add(time.Hour))
	old, _ := NewUserToken(ann.ID, "old", now.Add(-2*time.Hour), now.Add(-time.Hour))
	bobs, _ := NewUserToken(bob.ID, "bob", now, now.Add(time.Hour))
	for _, tok := range []*UserToken{live, old, bobs} {
		if err := us.CreateToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := us.UpdateUser(ctx, ann.ID, func(u *User) error { u.Teams = []string{"ads", "search"}; return nil }); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, user string
		role       Role
		token      string
		users      Users
		teams      string // the principal's, when it lives
		err        error
	}{
		{name: "OpenID Connect: the teams of now", user: ann.ID, role: RoleTeamAdmin, users: us, teams: "ads,search"},
		{name: "personal token", user: ann.ID, role: RoleTeamAdmin, token: live.Hash, users: us, teams: "ads,search"},
		{name: "role changed", user: ann.ID, role: RoleAdmin, users: us, err: ErrInvalid},
		{name: "user deleted", user: "usr_gone", role: RoleTeamAdmin, users: us, err: ErrInvalid},
		{name: "token revoked", user: ann.ID, role: RoleTeamAdmin, token: Hash("sk-sluice-user-revoked"), users: us, err: ErrInvalid},
		{name: "token expired", user: ann.ID, role: RoleTeamAdmin, token: old.Hash, users: us, err: ErrInvalid},
		{name: "another user's token", user: ann.ID, role: RoleTeamAdmin, token: bobs.Hash, users: us, err: ErrInvalid},
		{name: "the store down", user: ann.ID, role: RoleTeamAdmin, users: &downUsers{}, err: errStoreDown},
		{name: "the store down, a token", user: ann.ID, role: RoleTeamAdmin, token: live.Hash, users: &downUsers{}, err: errStoreDown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := SessionPrincipal(ctx, tt.users, tt.user, tt.role, tt.token, now)
			if !errors.Is(err, tt.err) {
				t.Fatalf("got %+v, %v; want %v", p, err, tt.err)
			}
			if tt.err == nil && (p.User != tt.user || p.Role != tt.role || strings.Join(p.Teams, ",") != tt.teams) {
				t.Errorf("got %+v, want %s as %s in %s", p, tt.user, tt.role, tt.teams)
			}
		})
	}
	if err := us.DeleteUser(ctx, ann.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := SessionPrincipal(ctx, us, ann.ID, RoleTeamAdmin, live.Hash, now); !errors.Is(err, ErrInvalid) {
		t.Errorf("after the user's deletion: got %v, want ErrInvalid", err)
	}
}
