package console

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/console/oidctest"
)

// oidcConsole is a console signing in with p, served on loopback, and what it provisioned.
func oidcConsole(t *testing.T, p *oidctest.Provider) (*httptest.Server, *[]Identity, *MemoryStore) {
	t.Helper()
	return oidcServer(t, OIDC{Name: "test", Issuer: p.URL, ClientID: oidctest.ClientID, ClientSecret: "s3cret",
		Scopes: []string{"email", "groups"},
		Roles:  []RoleMap{{Group: "search-admins", Role: "team_admin", Team: "search"}, {Group: "ads-viewers", Role: "viewer", Team: "ads"}}})
}

// oidcServer is a console signing in with issuers (each's RedirectURL its callback on this
// server), served on loopback, and what it provisioned. A user is named by the issuer and
// the subject, as the gateway's users are (auth.OIDCUserID): the same subject at two
// issuers is two users.
func oidcServer(t *testing.T, issuers ...OIDC) (*httptest.Server, *[]Identity, *MemoryStore) {
	t.Helper()
	var ids []Identity
	var mu sync.Mutex
	store := NewMemoryStore()
	srv := httptest.NewUnstartedServer(nil)
	for i := range issuers {
		issuers[i].RedirectURL = "http://" + srv.Listener.Addr().String() + "/console/oidc/" + issuers[i].Name + "/callback"
	}
	c := New(Options{Check: check, Store: store, OIDC: issuers,
		Provision: func(_ context.Context, id Identity) (*Who, error) {
			mu.Lock()
			defer mu.Unlock()
			ids = append(ids, id)
			return &Who{User: "usr_" + id.Provider + "_" + id.Subject, Role: id.Role, Teams: id.Teams}, nil
		}})
	srv.Config.Handler = c.Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &ids, store
}

// browser is a client with cookies that follows redirects, as a browser would.
func browser(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 10 * time.Second}
}

func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func TestOIDCSignIn(t *testing.T) {
	p := oidctest.New(t)
	srv, ids, _ := oidcConsole(t, p)
	b := browser(t)
	res, body := get(t, b, srv.URL+"/console/session")
	if !strings.Contains(body, `"login":"/console/oidc/test/login"`) {
		t.Fatalf("the sign-in page is not offered the issuer: %s", body)
	}
	res, _ = get(t, b, srv.URL+"/console/oidc/test/login?return_to="+url.QueryEscape("/console/?page=logs"))
	if res.StatusCode != 200 || res.Request.URL.Path != "/console/" || res.Request.URL.RawQuery != "page=logs" {
		t.Fatalf("landed on %s (%d), want /console/?page=logs", res.Request.URL, res.StatusCode)
	}
	_, body = get(t, b, srv.URL+"/console/session")
	var st state
	_ = json.Unmarshal([]byte(body), &st)
	if !st.SignedIn || st.Who == nil || st.Who.Role != "team_admin" || len(st.Who.Teams) != 1 || st.Who.Teams[0] != "search" {
		t.Fatalf("session %s: want a team_admin of search", body)
	}
	if len(*ids) != 1 || (*ids)[0].Email != "ann@example.com" || (*ids)[0].Issuer != p.URL || (*ids)[0].Subject != "ann" {
		t.Fatalf("provisioned %+v", *ids)
	}
	// The flow is used once: its cookie is gone, a second callback is refused.
	u, _ := url.Parse(srv.URL)
	for _, ck := range b.Jar.Cookies(u) {
		if ck.Name == flowPlain {
			t.Errorf("the flow cookie stayed: %v", ck)
		}
	}
}

// TestOIDCRefused: every ID token or callback that must not sign in, with its answer.
func TestOIDCRefused(t *testing.T) {
	p := oidctest.New(t)
	srv, _, _ := oidcConsole(t, p)
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	// A first sign-in, whose nonce is replayed below.
	get(t, browser(t), srv.URL+"/console/oidc/test/login")
	first := p.Nonces()[0]
	for _, c := range []struct {
		name   string
		tweak  func(map[string]any)
		signer *rsa.PrivateKey
		status int
	}{
		{"another issuer", func(c map[string]any) { c["iss"] = "https://evil.example" }, nil, 401},
		{"another audience", func(c map[string]any) { c["aud"] = "someone-else" }, nil, 401},
		{"expired", func(c map[string]any) { c["exp"] = time.Now().Add(-time.Hour).Unix() }, nil, 401},
		{"a bad signature", nil, other, 401},
		{"a replayed nonce", func(c map[string]any) { c["nonce"] = first }, nil, 401},
		{"no nonce", func(c map[string]any) { delete(c, "nonce") }, nil, 401},
		{"no mapped group", func(c map[string]any) { c["groups"] = []string{"interns"} }, nil, 403},
	} {
		t.Run(c.name, func(t *testing.T) {
			p.Set(c.tweak, c.signer)
			b := browser(t)
			res, body := get(t, b, srv.URL+"/console/oidc/test/login")
			if res.StatusCode != c.status || res.Request.URL.Path != "/console/oidc/test/callback" {
				t.Fatalf("got %d at %s: %s; want %d at the callback", res.StatusCode, res.Request.URL.Path, body, c.status)
			}
			if _, body := get(t, b, srv.URL+"/console/session"); strings.Contains(body, `"signed_in":true`) {
				t.Fatalf("signed in: %s", body)
			}
		})
	}
	p.Set(nil, nil)

	t.Run("a wrong state", func(t *testing.T) {
		b := browser(t)
		b.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		res, _ := get(t, b, srv.URL+"/console/oidc/test/login")
		res, _ = get(t, b, res.Header.Get("Location")) // the issuer approves
		cb, _ := url.Parse(res.Header.Get("Location"))
		q := cb.Query()
		q.Set("state", random(32))
		cb.RawQuery = q.Encode()
		res, body := get(t, b, cb.String())
		if res.StatusCode != 400 || !strings.Contains(body, "invalid_state") {
			t.Fatalf("got %d %s, want 400 invalid_state", res.StatusCode, body)
		}
	})
	t.Run("a callback in another browser", func(t *testing.T) {
		b := browser(t)
		b.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		res, _ := get(t, b, srv.URL+"/console/oidc/test/login")
		res, _ = get(t, b, res.Header.Get("Location"))
		res, body := get(t, browser(t), res.Header.Get("Location")) // no flow cookie
		if res.StatusCode != 400 || !strings.Contains(body, "invalid_state") {
			t.Fatalf("got %d %s, want 400 invalid_state", res.StatusCode, body)
		}
	})
	t.Run("an open redirect", func(t *testing.T) {
		for _, to := range []string{"//evil.example/", "https://evil.example/console/", "/\\evil.example", "/console/../admin",
			"javascript:alert(1)", "/other", "/console/\r\nX: y"} {
			res, body := get(t, browser(t), srv.URL+"/console/oidc/test/login?return_to="+url.QueryEscape(to))
			if res.StatusCode != 400 || !strings.Contains(body, "invalid_return_to") {
				t.Errorf("return_to %q: got %d %s, want 400", to, res.StatusCode, body)
			}
		}
		if !SafeReturn("/console/") || !SafeReturn("/console/?page=keys") {
			t.Error("the console's own paths are refused")
		}
	})
	t.Run("an unknown issuer", func(t *testing.T) {
		if res, _ := get(t, browser(t), srv.URL+"/console/oidc/nope/login"); res.StatusCode != 404 {
			t.Fatalf("got %d, want 404", res.StatusCode)
		}
	})
}

// TestOIDCSessionFixation: a session id planted in the browser before the sign-in is never
// the one signed in, and is ended; the new session's changes need its CSRF token.
func TestOIDCSessionFixation(t *testing.T) {
	p := oidctest.New(t)
	srv, _, store := oidcConsole(t, p)
	c := New(Options{Check: check, Store: store})
	// The attacker signs in (with a token here) and plants that session's cookie.
	w := httptest.NewRecorder()
	c.Handler().ServeHTTP(w, request("POST", "/console/session", `{"token":"`+adminToken+`"}`, "Content-Type", "application/json"))
	planted := w.Result().Cookies()[0]
	b := browser(t)
	u, _ := url.Parse(srv.URL)
	b.Jar.SetCookies(u, []*http.Cookie{{Name: planted.Name, Value: planted.Value, Path: "/"}})
	get(t, b, srv.URL+"/console/oidc/test/login")
	var got string
	for _, ck := range b.Jar.Cookies(u) {
		if ck.Name == cookiePlain {
			got = ck.Value
		}
	}
	if got == "" || got == planted.Value {
		t.Fatalf("session cookie %q after sign-in; want a new one", got)
	}
	if ok(c.Authorize(with("GET", "/admin/logs", planted, ""))) {
		t.Error("the planted session still works after the victim signed in")
	}
	// The new session is the victim's, and a change needs its CSRF token.
	mine := &http.Cookie{Name: cookiePlain, Value: got}
	who, yes := c.Authorize(with("GET", "/admin/keys", mine, ""))
	if !yes || who.Role != "team_admin" {
		t.Fatalf("got %+v, %v; want the victim's team_admin session", who, yes)
	}
	if ok(c.Authorize(with("POST", "/admin/keys", mine, ""))) || ok(c.Authorize(with("POST", "/admin/keys", mine, "wrong"))) {
		t.Error("a change without the session's CSRF token passed")
	}
}

// TestOIDCTwoIssuers: with two issuers configured at once, each signs in its own users with
// its own mapping, and nothing of one passes through the other: not its callback (code and
// state), not its code, not its tokens or keys, not its groups.
func TestOIDCTwoIssuers(t *testing.T) {
	corp, partners := oidctest.NewClient(t, "console-corp"), oidctest.NewClient(t, "console-partners")
	srv, ids, _ := oidcServer(t,
		OIDC{Name: "corp", Issuer: corp.URL, ClientID: "console-corp", ClientSecret: "corp-s3cret",
			Roles:       []RoleMap{{Group: "platform", Role: "admin"}, {Group: "search-admins", Role: "team_admin", Team: "search"}},
			DefaultRole: "member", DefaultTeam: "corp"},
		OIDC{Name: "partners", Issuer: partners.URL, ClientID: "console-partners", ClientSecret: "partners-s3cret",
			Roles: []RoleMap{{Group: "ml-leads", Role: "team_admin", Team: "ml"}}}) // no default: unmapped is refused
	bob := func(c map[string]any) { c["sub"], c["email"] = "bob", "bob@partner.example" }
	corpKey := corp.Key()

	for _, c := range []struct {
		name string
		// setup sets what the issuers sign (both start with no groups, their own claims and key).
		setup func()
		// The sign-in starts at login; the code delivered is from a sign-in at code (in
		// another browser when it is not login); the callback is delivered at callback's path.
		login, code, callback string
		status                int
		errCode               string
		who                   *Who // the session's; nil: none
		issuer                string
	}{
		{"corp's user", func() { corp.SetGroups("platform") }, "corp", "corp", "corp",
			303, "", &Who{User: "usr_corp_ann", Role: "admin"}, corp.URL},
		{"partners' user", func() { partners.SetGroups("ml-leads"); partners.Set(bob, nil) }, "partners", "partners", "partners",
			303, "", &Who{User: "usr_partners_bob", Role: "team_admin", Teams: []string{"ml"}}, partners.URL},
		{"the same subject at partners is another user", func() { partners.SetGroups("ml-leads") }, "partners", "partners", "partners",
			303, "", &Who{User: "usr_partners_ann", Role: "team_admin", Teams: []string{"ml"}}, partners.URL},
		{"partners' group at corp: corp's default role", func() { corp.SetGroups("ml-leads") }, "corp", "corp", "corp",
			303, "", &Who{User: "usr_corp_ann", Role: "member", Teams: []string{"corp"}}, corp.URL},
		{"corp's admin group at partners: no role", func() { partners.SetGroups("platform", "search-admins") }, "partners", "partners", "partners",
			403, "no_role", nil, ""},
		{"corp's code and state at partners' callback", func() { corp.SetGroups("platform"); partners.SetGroups("platform") }, "corp", "corp", "partners",
			400, "invalid_state", nil, ""},
		{"partners' code and state at corp's callback", func() { corp.SetGroups("platform"); partners.SetGroups("ml-leads") }, "partners", "partners", "corp",
			400, "invalid_state", nil, ""},
		{"corp's code in partners' sign-in", func() { corp.SetGroups("platform"); partners.SetGroups("ml-leads") }, "partners", "corp", "partners",
			401, "invalid_id_token", nil, ""},
		{"corp's token through partners", func() {
			partners.SetGroups("platform")
			partners.Set(func(c map[string]any) { c["iss"], c["aud"] = corp.URL, "console-corp" }, corpKey)
		}, "partners", "partners", "partners", 401, "invalid_id_token", nil, ""},
		{"corp's key, partners' claims", func() { partners.SetGroups("ml-leads"); partners.Set(nil, corpKey) }, "partners", "partners", "partners",
			401, "invalid_id_token", nil, ""},
		{"corp's issuer claim, partners' key", func() {
			partners.SetGroups("ml-leads")
			partners.Set(func(c map[string]any) { c["iss"] = corp.URL }, nil)
		}, "partners", "partners", "partners", 401, "invalid_id_token", nil, ""},
		{"corp's audience at partners", func() {
			partners.SetGroups("ml-leads")
			partners.Set(func(c map[string]any) { c["aud"] = "console-corp" }, nil)
		}, "partners", "partners", "partners", 401, "invalid_id_token", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, p := range []*oidctest.Provider{corp, partners} {
				p.SetGroups()
				p.Set(nil, nil)
			}
			c.setup()
			*ids = nil
			b := browser(t)
			cb := approved(t, b, srv.URL, c.login)
			if c.code != c.login {
				q := cb.Query()
				q.Set("code", approved(t, browser(t), srv.URL, c.code).Query().Get("code"))
				cb.RawQuery = q.Encode()
			}
			cb.Path = "/console/oidc/" + c.callback + "/callback"
			res, body := get(t, b, cb.String())
			if res.StatusCode != c.status || !strings.Contains(body, c.errCode) {
				t.Fatalf("got %d %s, want %d %s", res.StatusCode, body, c.status, c.errCode)
			}
			_, body = get(t, b, srv.URL+"/console/session")
			var st state
			if err := json.Unmarshal([]byte(body), &st); err != nil {
				t.Fatalf("session %s: %v", body, err)
			}
			if c.who == nil {
				if st.SignedIn || len(*ids) != 0 {
					t.Fatalf("session %s, provisioned %+v; want neither", body, *ids)
				}
				return
			}
			if !st.SignedIn || st.Who == nil || st.Who.User != c.who.User || st.Who.Role != c.who.Role ||
				strings.Join(st.Who.Teams, ",") != strings.Join(c.who.Teams, ",") {
				t.Fatalf("session %s, want %+v", body, *c.who)
			}
			if len(*ids) != 1 || (*ids)[0].Provider != c.login || (*ids)[0].Issuer != c.issuer {
				t.Fatalf("provisioned %+v, want one by %s (%s)", *ids, c.login, c.issuer)
			}
		})
	}
}

// approved starts a sign-in at the issuer name in b, has the issuer approve it, and returns
// the callback the issuer sends the browser to, not yet delivered: b follows no redirect
// from then on.
func approved(t *testing.T, b *http.Client, console, name string) *url.URL {
	t.Helper()
	b.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, body := get(t, b, console+"/console/oidc/"+name+"/login")
	if res.StatusCode != http.StatusFound {
		t.Fatalf("login at %s: got %d %s, want 302", name, res.StatusCode, body)
	}
	res, body = get(t, b, res.Header.Get("Location"))
	cb, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusFound || err != nil || cb.Path != "/console/oidc/"+name+"/callback" {
		t.Fatalf("the issuer %s answered %d %s, want a redirect to its callback", name, res.StatusCode, body)
	}
	return cb
}

// TestMapGroups: the strongest matching role and every match's team; default_role, in
// default_team, only when no group matches (a member needs a team to make keys).
func TestMapGroups(t *testing.T) {
	o := &OIDC{Roles: []RoleMap{{Group: "search-admins", Role: "team_admin", Team: "search"},
		{Group: "ads-viewers", Role: "viewer", Team: "ads"}, {Group: "staff", Role: "member"}},
		DefaultRole: "member", DefaultTeam: "everyone"}
	for _, c := range []struct {
		name   string
		o      *OIDC
		groups []string
		role   string
		teams  string
	}{
		{"one match", o, []string{"ads-viewers"}, "viewer", "ads"},
		{"the strongest role, every team", o, []string{"ads-viewers", "search-admins"}, "team_admin", "search,ads"},
		{"a match without team: no default team", o, []string{"staff"}, "member", ""},
		{"no match: the default role in the default team", o, []string{"other"}, "member", "everyone"},
		{"no groups: the same", o, nil, "member", "everyone"},
		{"no default role: refused, whatever the default team", &OIDC{Roles: o.Roles, DefaultTeam: "everyone"}, nil, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			role, teams := c.o.mapGroups(c.groups)
			if role != c.role || strings.Join(teams, ",") != c.teams {
				t.Errorf("got %q in %q, want %q in %q", role, teams, c.role, c.teams)
			}
		})
	}
}
