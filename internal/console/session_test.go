package console

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

const adminToken = "admin-token-for-tests"

func check(tok string) bool { return tok == adminToken } // the server's is constant time

// clock is a settable Options.Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newConsole(store Store) (*Console, *clock) {
	clk := &clock{now: time.Date(2026, 6, 30, 9, 0, 0, 0, time.UTC)}
	return New(Options{Check: check, Store: store, TTL: time.Hour, Now: clk.Now}), clk
}

func request(method, path, body string, header ...string) *http.Request {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	return r
}

// signIn signs in over r's scheme and returns the session's cookie and CSRF token.
func signIn(t *testing.T, c *Console, tlsOn bool) (*http.Cookie, string) {
	t.Helper()
	r := request("POST", "/console/session", `{"token":"`+adminToken+`"}`, "Content-Type", "application/json")
	if tlsOn {
		r.TLS = &tls.ConnectionState{}
	}
	w := httptest.NewRecorder()
	c.Handler().ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("sign-in: got %d %s, want 200", w.Code, w.Body)
	}
	var s state
	if err := json.Unmarshal(w.Body.Bytes(), &s); err != nil || !s.SignedIn || s.CSRF == "" {
		t.Fatalf("sign-in answer: got %s (%v), want signed_in and a csrf", w.Body, err)
	}
	cookies := w.Result().Cookies()
	if len(cookies) != 1 {
		t.Fatalf("got %d cookies, want 1", len(cookies))
	}
	return cookies[0], s.CSRF
}

// with is a request carrying the session cookie and, if csrf is set, the CSRF header.
func with(method, path string, ck *http.Cookie, csrf string) *http.Request {
	r := request(method, path, "")
	if ck != nil {
		r.AddCookie(ck)
	}
	if csrf != "" {
		r.Header.Set(CSRFHeader, csrf)
	}
	return r
}

func TestCookie(t *testing.T) {
	tests := []struct {
		name   string
		tls    bool
		header []string
		cookie string
		secure bool
	}{
		{"plain HTTP", false, nil, "sluice_console", false},
		{"TLS", true, nil, "__Host-sluice_console", true},
		{"TLS at a proxy", false, []string{"X-Forwarded-Proto", "https"}, "__Host-sluice_console", true},
		{"a proxy's list, first wins", false, []string{"X-Forwarded-Proto", "http, https"}, "sluice_console", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, clk := newConsole(nil)
			r := request("POST", "/console/session", `{"token":"`+adminToken+`"}`, append([]string{"Content-Type", "application/json; charset=utf-8"}, tt.header...)...)
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			}
			w := httptest.NewRecorder()
			c.Handler().ServeHTTP(w, r)
			if w.Code != 200 {
				t.Fatalf("got %d %s, want 200", w.Code, w.Body)
			}
			ck := w.Result().Cookies()[0]
			raw := w.Header().Get("Set-Cookie")
			if ck.Name != tt.cookie || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" || ck.Domain != "" {
				t.Errorf("got %q, want %s, HttpOnly, SameSite=Strict, Path=/, no Domain", raw, tt.cookie)
			}
			if ck.Secure != tt.secure {
				t.Errorf("Secure: got %v, want %v (%q)", ck.Secure, tt.secure, raw)
			}
			if ck.MaxAge != 3600 || !ck.Expires.Equal(clk.Now().Add(time.Hour).Truncate(time.Second)) {
				t.Errorf("expiry: got Max-Age %d, Expires %v; want 3600 and an hour from now", ck.MaxAge, ck.Expires)
			}
			if len(ck.Value) != 43 {
				t.Errorf("value: got %d characters, want 43 (32 random bytes)", len(ck.Value))
			}
			if w.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control: got %q, want no-store", w.Header().Get("Cache-Control"))
			}
		})
	}
}

func TestSignInRefused(t *testing.T) {
	tests := []struct {
		name, ctype, body string
		check             func(string) bool
		status            int
		code              string
	}{
		{"a wrong token", "application/json", `{"token":"nope"}`, check, 401, "invalid_admin_token"},
		{"no token", "application/json", `{"token":""}`, check, 401, "invalid_admin_token"},
		{"not JSON", "application/json", `token=x`, check, 400, "invalid_body"},
		{"an unknown member", "application/json", `{"token":"` + adminToken + `","x":1}`, check, 400, "invalid_body"},
		{"trailing data", "application/json", `{"token":"` + adminToken + `"} {}`, check, 400, "invalid_body"},
		{"too large", "application/json", `{"token":"` + strings.Repeat("a", 5000) + `"}`, check, 400, "invalid_body"},
		{"a form (a cross-site post)", "text/plain", `{"token":"` + adminToken + `"}`, check, 415, "unsupported_media_type"},
		{"the admin API is off", "application/json", `{"token":"` + adminToken + `"}`, nil, 404, "admin_api_off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := NewMemoryStore()
			c := New(Options{Check: tt.check, Store: store})
			w := httptest.NewRecorder()
			c.Handler().ServeHTTP(w, request("POST", "/console/session", tt.body, "Content-Type", tt.ctype))
			var e errBody
			_ = json.Unmarshal(w.Body.Bytes(), &e)
			if w.Code != tt.status || e.Error.Code != tt.code {
				t.Errorf("got %d %q, want %d %q", w.Code, e.Error.Code, tt.status, tt.code)
			}
			if len(w.Result().Cookies()) != 0 || store.Len() != 0 {
				t.Errorf("a refused sign-in set a cookie or stored a session")
			}
		})
	}
}

func TestAuthorize(t *testing.T) {
	c, clk := newConsole(nil)
	ck, csrf := signIn(t, c, false)
	other, _ := signIn(t, c, false)
	forged := &http.Cookie{Name: ck.Name, Value: strings.Repeat("A", 43)}
	tests := []struct {
		name string
		r    *http.Request
		want bool
	}{
		{"GET with the session", with("GET", "/admin/logs", ck, ""), true},
		{"HEAD with the session", with("HEAD", "/admin/keys", ck, ""), true},
		{"POST with the session and its CSRF token", with("POST", "/admin/keys", ck, csrf), true},
		{"DELETE with the session and its CSRF token", with("DELETE", "/admin/keys/k", ck, csrf), true},
		{"POST without the CSRF token", with("POST", "/admin/keys", ck, ""), false},
		{"PATCH with a wrong CSRF token", with("PATCH", "/admin/keys/k", ck, csrf+"x"), false},
		{"POST with another session's cookie and this one's token", with("POST", "/admin/keys", other, csrf), false},
		{"no cookie", with("GET", "/admin/logs", nil, ""), false},
		{"no cookie, a CSRF token", with("POST", "/admin/keys", nil, csrf), false},
		{"a made-up session", with("GET", "/admin/logs", forged, ""), false},
		{"the cookie of plain HTTP over TLS", func() *http.Request {
			r := with("GET", "/admin/logs", ck, "")
			r.TLS = &tls.ConnectionState{}
			return r
		}(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ok(c.Authorize(tt.r)); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("over TLS, the __Host- cookie", func(t *testing.T) {
		tck, tcsrf := signIn(t, c, true)
		r := with("POST", "/admin/keys", tck, tcsrf)
		r.TLS = &tls.ConnectionState{}
		if !ok(c.Authorize(r)) {
			t.Error("got refused, want authorized")
		}
	})
	t.Run("expired", func(t *testing.T) {
		clk.add(time.Hour)
		if ok(c.Authorize(with("GET", "/admin/logs", ck, ""))) {
			t.Error("a session past its TTL: got authorized, want refused")
		}
	})
}

func TestStatus(t *testing.T) {
	c, clk := newConsole(nil)
	get := func(ck *http.Cookie) state {
		t.Helper()
		w := httptest.NewRecorder()
		c.Handler().ServeHTTP(w, with("GET", "/console/session", ck, ""))
		var s state
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &s) != nil {
			t.Fatalf("got %d %s, want 200 and JSON", w.Code, w.Body)
		}
		return s
	}
	if s := get(nil); s.SignedIn || s.CSRF != "" {
		t.Errorf("no cookie: got %+v, want signed out", s)
	}
	ck, csrf := signIn(t, c, false)
	s := get(ck)
	if !s.SignedIn || s.CSRF != csrf || s.ExpiresAt == nil || !s.ExpiresAt.Equal(clk.Now().Add(time.Hour)) {
		t.Errorf("signed in: got %+v, want the sign-in's CSRF token and end", s)
	}
	if s := get(nil); s.SignedIn {
		t.Error("another browser: got signed in")
	}
}

// Signing out deletes the session from the shared store: a second replica (another Console
// on the same Store) stops accepting it at once.
func TestSignOutEverywhere(t *testing.T) {
	store := NewMemoryStore()
	a, _ := newConsole(store)
	b, _ := newConsole(store)
	ck, csrf := signIn(t, a, false)
	if !ok(b.Authorize(with("POST", "/admin/keys", ck, csrf))) {
		t.Fatal("the other replica does not accept the session")
	}
	w := httptest.NewRecorder()
	a.Handler().ServeHTTP(w, with("DELETE", "/console/session", ck, ""))
	if w.Code != http.StatusForbidden || !ok(b.Authorize(with("GET", "/admin/logs", ck, ""))) {
		t.Fatalf("sign-out without the CSRF token: got %d, want 403 and the session alive", w.Code)
	}
	w = httptest.NewRecorder()
	a.Handler().ServeHTTP(w, with("DELETE", "/console/session", ck, csrf))
	if w.Code != http.StatusNoContent {
		t.Fatalf("sign-out: got %d %s, want 204", w.Code, w.Body)
	}
	cleared := w.Result().Cookies()
	if len(cleared) != 1 || cleared[0].Name != ck.Name || cleared[0].MaxAge >= 0 || cleared[0].Value != "" {
		t.Errorf("sign-out cookie: got %q, want the cookie cleared", w.Header().Get("Set-Cookie"))
	}
	if store.Len() != 0 {
		t.Errorf("the store holds %d sessions after sign-out, want 0", store.Len())
	}
	for name, c := range map[string]*Console{"this replica": a, "the other replica": b} {
		if ok(c.Authorize(with("GET", "/admin/logs", ck, ""))) || ok(c.Authorize(with("POST", "/admin/keys", ck, csrf))) {
			t.Errorf("%s still accepts the session", name)
		}
	}
	// Signing out again, or without a session, only clears the cookie.
	w = httptest.NewRecorder()
	b.Handler().ServeHTTP(w, with("DELETE", "/console/session", ck, ""))
	if w.Code != http.StatusNoContent {
		t.Errorf("a second sign-out: got %d, want 204", w.Code)
	}
}

// A new sign-in replaces the session the browser had: the old one is deleted.
func TestSignInReplaces(t *testing.T) {
	store := NewMemoryStore()
	c, _ := newConsole(store)
	old, _ := signIn(t, c, false)
	r := request("POST", "/console/session", `{"token":"`+adminToken+`"}`, "Content-Type", "application/json")
	r.AddCookie(old)
	w := httptest.NewRecorder()
	c.Handler().ServeHTTP(w, r)
	if w.Code != 200 {
		t.Fatalf("got %d", w.Code)
	}
	if fresh := w.Result().Cookies()[0]; fresh.Value == old.Value {
		t.Error("the sign-in kept the browser's session id")
	}
	if ok(c.Authorize(with("GET", "/admin/logs", old, ""))) || store.Len() != 1 {
		t.Errorf("the old session lives on (%d stored)", store.Len())
	}
}

// store that fails, as Redis does when it is down.
type brokenStore struct{}

var errDown = errors.New("down")

func (brokenStore) Put(context.Context, string, string, []byte, time.Duration) error { return errDown }
func (brokenStore) Get(context.Context, string) ([]byte, error)                      { return nil, errDown }
func (brokenStore) Delete(context.Context, string) error                             { return errDown }
func (brokenStore) EndUser(context.Context, string) error                            { return errDown }

// A store that fails denies (fail closed) and answers 503, never a session.
func TestStoreDown(t *testing.T) {
	good, _ := newConsole(nil)
	ck, csrf := signIn(t, good, false)
	c, _ := newConsole(brokenStore{})
	if ok(c.Authorize(with("GET", "/admin/logs", ck, ""))) || ok(c.Authorize(with("POST", "/admin/keys", ck, csrf))) {
		t.Error("authorized with the store down")
	}
	for _, r := range []*http.Request{
		request("POST", "/console/session", `{"token":"`+adminToken+`"}`, "Content-Type", "application/json"),
		with("GET", "/console/session", ck, ""),
		with("DELETE", "/console/session", ck, csrf),
	} {
		w := httptest.NewRecorder()
		c.Handler().ServeHTTP(w, r)
		if w.Code != http.StatusServiceUnavailable || len(w.Result().Cookies()) != 0 {
			t.Errorf("%s %s: got %d, want 503 and no cookie", r.Method, r.URL.Path, w.Code)
		}
	}
}

// The store's ids are digests of the cookies, never the cookies themselves.
func TestStoreHoldsNoCookie(t *testing.T) {
	store := NewMemoryStore()
	c, _ := newConsole(store)
	ck, _ := signIn(t, c, false)
	store.mu.Lock()
	defer store.mu.Unlock()
	for id, e := range store.m {
		if strings.Contains(id, ck.Value) || strings.Contains(string(e.data), ck.Value) {
			t.Errorf("the store holds the cookie's value")
		}
	}
}

func TestMemoryStoreExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := NewMemoryStore()
		if err := s.Put(ctx, "a", "", []byte("1"), time.Minute); err != nil {
			t.Fatal(err)
		}
		_ = s.Put(ctx, "b", "", []byte("2"), time.Hour)
		if b, _ := s.Get(ctx, "a"); string(b) != "1" {
			t.Errorf("got %q, want 1", b)
		}
		time.Sleep(time.Minute)
		if b, _ := s.Get(ctx, "a"); b != nil {
			t.Errorf("after its TTL: got %q, want nothing", b)
		}
		_ = s.Put(ctx, "c", "", []byte("3"), time.Hour) // sweeps a
		if s.Len() != 2 {
			t.Errorf("after a sweep: got %d entries, want 2", s.Len())
		}
		_ = s.Delete(ctx, "b")
		_ = s.Delete(ctx, "nothing")
		if b, _ := s.Get(ctx, "b"); b != nil || s.Len() != 1 {
			t.Errorf("after Delete: got %q and %d entries", b, s.Len())
		}
	})
}

// ok is whether Authorize let the request through.
func ok(_ Who, b bool) bool { return b }

// A user signs in with their personal token (Options.Personal): the session acts for them,
// not for admin; a token Personal does not know is a 401 and a users' store that fails a
// 503, neither with a session.
func TestSignInPersonal(t *testing.T) {
	ann := &Who{User: "usr_ann", Role: "team_admin", Teams: []string{"search"}}
	personal := func(_ context.Context, tok string) (*Who, error) {
		switch tok {
		case "sk-sluice-user-ann":
			return ann, nil
		case "sk-sluice-user-down":
			return nil, errors.New("the users' store is down")
		}
		return nil, nil
	}
	tests := []struct {
		name, token string
		status      int
		who         Who
	}{
		{"a personal token", "sk-sluice-user-ann", 200, *ann},
		{"the admin token", adminToken, 200, Admin},
		{"a token of no one", "sk-sluice-user-nobody", 401, Who{}},
		{"the users' store down", "sk-sluice-user-down", 503, Who{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := NewMemoryStore()
			c := New(Options{Check: check, Store: store, Personal: personal})
			w := httptest.NewRecorder()
			c.Handler().ServeHTTP(w, request("POST", "/console/session", `{"token":"`+tt.token+`"}`, "Content-Type", "application/json"))
			if w.Code != tt.status {
				t.Fatalf("got %d %s, want %d", w.Code, w.Body, tt.status)
			}
			if tt.status != 200 {
				if len(w.Result().Cookies()) != 0 || store.Len() != 0 {
					t.Error("a refused sign-in set a cookie or stored a session")
				}
				return
			}
			got, authorized := c.Authorize(with("GET", "/admin/keys", w.Result().Cookies()[0], ""))
			if !authorized || got.User != tt.who.User || got.Role != tt.who.Role || strings.Join(got.Teams, ",") != strings.Join(tt.who.Teams, ",") {
				t.Errorf("the session acts for %+v (%v), want %+v", got, authorized, tt.who)
			}
		})
	}
}
