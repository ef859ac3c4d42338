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
	var ids []Identity
	var mu sync.Mutex
	store := NewMemoryStore()
	srv := httptest.NewUnstartedServer(nil)
	c := New(Options{Check: check, Store: store, OIDC: []OIDC{{Name: "test", Issuer: p.URL, ClientID: oidctest.ClientID,
		ClientSecret: "s3cret", RedirectURL: "http://" + srv.Listener.Addr().String() + "/console/oidc/test/callback",
		Scopes: []string{"email", "groups"},
		Roles:  []RoleMap{{Group: "search-admins", Role: "team_admin", Team: "search"}, {Group: "ads-viewers", Role: "viewer", Team: "ads"}}}},
		Provision: func(_ context.Context, id Identity) (*Who, error) {
			mu.Lock()
			defer mu.Unlock()
			ids = append(ids, id)
			return &Who{User: "usr_" + id.Subject, Role: id.Role, Teams: id.Teams}, nil
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
