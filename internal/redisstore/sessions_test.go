package redisstore_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/console"
	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
)

const adminToken = "admin-token-of-the-fleet"

func consoleOn(s *redisstore.Store) *console.Console {
	return console.New(console.Options{Check: func(t string) bool { return t == adminToken },
		Store: s.ConsoleSessions(), TTL: time.Hour})
}

// signIn signs in through c; it returns the session's cookie and CSRF token.
func signIn(t *testing.T, c *console.Console) (*http.Cookie, string) {
	t.Helper()
	r := httptest.NewRequest("POST", "/console/session", strings.NewReader(`{"token":"`+adminToken+`"}`))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	c.Handler().ServeHTTP(w, r)
	var s struct{ CSRF string }
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &s) != nil || len(w.Result().Cookies()) != 1 {
		t.Fatalf("sign-in: got %d %s", w.Code, w.Body)
	}
	return w.Result().Cookies()[0], s.CSRF
}

func asked(method string, ck *http.Cookie, csrf string) *http.Request {
	r := httptest.NewRequest(method, "/admin/keys", nil)
	r.AddCookie(ck)
	if csrf != "" {
		r.Header.Set(console.CSRFHeader, csrf)
	}
	return r
}

// A session made on one replica is served by another, and a sign-out on either ends it on
// both; Redis holds a digest of the cookie, with the session's TTL, under the {console} tag.
func TestConsoleSessionsAcrossReplicas(t *testing.T) {
	forms(t, func(t *testing.T, srv backend) {
		a, b := consoleOn(replica(t, srv, true, nil)), consoleOn(replica(t, srv, true, nil))
		ck, csrf := signIn(t, a)
		if !ok(b.Authorize(asked("GET", ck, ""))) || !ok(b.Authorize(asked("POST", ck, csrf))) {
			t.Fatal("replica B does not accept A's session")
		}
		if ok(b.Authorize(asked("POST", ck, ""))) {
			t.Error("replica B accepts a change without the CSRF token")
		}

		dump := srv.Dump(t)
		if len(dump) != 1 || !strings.HasPrefix(dump[0], "sluice:{console}:session:") {
			t.Fatalf("Redis holds %q, want one sluice:{console}:session:<id>", dump)
		}
		if strings.Contains(dump[0], ck.Value) {
			t.Error("Redis holds the cookie's value")
		}
		key, _, _ := strings.Cut(dump[0], " = ")
		ttl, err := srv.Do("PTTL", key)
		if ms, _ := strconv.Atoi(strings.TrimPrefix(ttl, ":")); err != nil || ms <= 0 || ms > int(time.Hour/time.Millisecond) {
			t.Errorf("PTTL: got %q %v, want up to an hour", ttl, err)
		}

		r := asked("DELETE", ck, csrf)
		r.URL.Path = "/console/session"
		w := httptest.NewRecorder()
		b.Handler().ServeHTTP(w, r)
		if w.Code != http.StatusNoContent {
			t.Fatalf("sign-out on B: got %d %s", w.Code, w.Body)
		}
		if ok(a.Authorize(asked("GET", ck, ""))) || ok(b.Authorize(asked("GET", ck, ""))) {
			t.Error("the session outlives its sign-out on a replica")
		}
		if dump := srv.Dump(t); len(dump) != 0 {
			t.Errorf("Redis still holds %q", dump)
		}
	})
}

// While Redis is down, no session is accepted (fail closed, whatever on_failure says) and
// signing in answers 503; once it is back, the session made before works again.
func TestConsoleSessionsOutage(t *testing.T) {
	srv := redistest.Start(t)
	s := store(t, srv, redisstore.Options{FailOpen: true, Timeout: 300 * time.Millisecond}, nil)
	c := consoleOn(s)
	ck, _ := signIn(t, c)
	srv.Stop(t)
	if ok(c.Authorize(asked("GET", ck, ""))) {
		t.Error("a session accepted with Redis down")
	}
	r := httptest.NewRequest("POST", "/console/session", strings.NewReader(`{"token":"`+adminToken+`"}`))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	c.Handler().ServeHTTP(w, r)
	if w.Code != http.StatusServiceUnavailable || len(w.Result().Cookies()) != 0 {
		t.Errorf("sign-in with Redis down: got %d, want 503 and no cookie", w.Code)
	}
	srv.Start(t)
	deadline := time.Now().Add(10 * time.Second)
	for !ok(c.Authorize(asked("GET", ck, ""))) {
		if time.Now().After(deadline) {
			t.Fatal("the session is not accepted after Redis came back")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ok is whether Authorize let the request through.
func ok(_ console.Who, b bool) bool { return b }

// A user's sessions made on two replicas are indexed under the {console} tag (one slot: a
// cluster serves the index's script and transaction), and EndUser on either ends them all
// on both at once, the other users' and the admin token's left alone; the index lives as
// long as its longest session (issue 47).
func TestConsoleSessionsEndUser(t *testing.T) {
	forms(t, func(t *testing.T, srv backend) {
		personal := func(_ context.Context, tok string) (*console.Who, error) {
			if u, ok := strings.CutPrefix(tok, "tok-"); ok {
				return &console.Who{User: "usr_" + u, Role: "member"}, nil
			}
			return nil, nil
		}
		consoleOf := func() *console.Console {
			return console.New(console.Options{Check: func(t string) bool { return t == adminToken },
				Store: replica(t, srv, false, nil).ConsoleSessions(), TTL: time.Hour, Personal: personal})
		}
		a, b := consoleOf(), consoleOf()
		signInAs := func(c *console.Console, token string) *http.Cookie {
			r := httptest.NewRequest("POST", "/console/session", strings.NewReader(`{"token":"`+token+`"}`))
			r.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			c.Handler().ServeHTTP(w, r)
			if w.Code != 200 || len(w.Result().Cookies()) != 1 {
				t.Fatalf("sign-in: got %d %s", w.Code, w.Body)
			}
			return w.Result().Cookies()[0]
		}
		ann1, ann2, bob := signInAs(a, "tok-ann"), signInAs(b, "tok-ann"), signInAs(a, "tok-bob")
		root, _ := signIn(t, b)

		var index string
		for _, kv := range srv.Dump(t) {
			if strings.HasPrefix(kv, "sluice:{console}:user:usr_ann ") {
				index, _, _ = strings.Cut(kv, " = ")
			}
		}
		if index == "" {
			t.Fatalf("no index of ann's sessions in %q", srv.Dump(t))
		}
		ttl, err := srv.Do("PTTL", index)
		if ms, _ := strconv.Atoi(strings.TrimPrefix(ttl, ":")); err != nil || ms <= 0 || ms > int(time.Hour/time.Millisecond) {
			t.Errorf("the index's PTTL: got %q %v, want up to an hour", ttl, err)
		}

		if err := b.EndUser(context.Background(), "usr_ann"); err != nil {
			t.Fatal(err)
		}
		for _, ck := range []*http.Cookie{ann1, ann2} {
			if ok(a.Authorize(asked("GET", ck, ""))) || ok(b.Authorize(asked("GET", ck, ""))) {
				t.Error("a session of ann outlives EndUser")
			}
		}
		for name, ck := range map[string]*http.Cookie{"bob's": bob, "the admin token's": root} {
			if !ok(a.Authorize(asked("GET", ck, ""))) || !ok(b.Authorize(asked("GET", ck, ""))) {
				t.Errorf("%s session ended with ann's", name)
			}
		}
		var sessions, indexes int
		for _, kv := range srv.Dump(t) {
			switch {
			case strings.HasPrefix(kv, "sluice:{console}:session:"):
				sessions++
			case strings.HasPrefix(kv, "sluice:{console}:user:usr_bob "):
				indexes++
			case strings.HasPrefix(kv, "sluice:{console}:user:"):
				t.Errorf("left in Redis: %s", kv)
			}
		}
		if sessions != 2 || indexes != 1 {
			t.Errorf("got %d sessions and %d indexes, want bob's and the admin token's, bob's indexed", sessions, indexes)
		}
		if err := a.EndUser(context.Background(), "usr_nobody"); err != nil {
			t.Errorf("EndUser of a user without sessions: %v", err)
		}
	})
}
