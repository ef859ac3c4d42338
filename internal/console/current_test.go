package console

import (
	"context"
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

// directory is a users' store as Options.Personal and Options.Current see it: users by
// personal token, and whom each user is now (nil: deleted).
type directory struct {
	mu     sync.Mutex
	tokens map[string]string // token -> user
	now    map[string]*Who   // user -> who they are now
	down   bool
	asked  []Who // what Current was asked
}

func (d *directory) personal(_ context.Context, token string) (*Who, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	u, ok := d.tokens[token]
	if !ok || d.now[u] == nil {
		return nil, nil
	}
	w := *d.now[u]
	w.Token = "hash-of-" + token
	return &w, nil
}

func (d *directory) current(_ context.Context, signed Who) (*Who, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.asked = append(d.asked, signed)
	if d.down {
		return nil, errors.New("the users' store is down")
	}
	w := d.now[signed.User]
	if w == nil || w.Role != signed.Role || d.tokens[strings.TrimPrefix(signed.Token, "hash-of-")] != signed.User {
		return nil, nil
	}
	c := *w
	c.Token = signed.Token
	return &c, nil
}

func (d *directory) set(user string, w *Who) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.now[user] = w
}

// signInAs signs in to c with token; the session's cookie and CSRF token.
func signInAs(t *testing.T, c *Console, token string) (*http.Cookie, string) {
	t.Helper()
	w := httptest.NewRecorder()
	c.Handler().ServeHTTP(w, request("POST", "/console/session", `{"token":"`+token+`"}`, "Content-Type", "application/json"))
	var s state
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &s) != nil || len(w.Result().Cookies()) != 1 {
		t.Fatalf("sign-in: got %d %s", w.Code, w.Body)
	}
	if strings.Contains(w.Body.String(), "hash-of-") {
		t.Errorf("the sign-in's answer shows the token's reference: %s", w.Body)
	}
	return w.Result().Cookies()[0], s.CSRF
}

// A user's session acts for the user as Current says they are now, at every call, on every
// replica; one Current ends is deleted from the Store; a Current that fails refuses it
// (fail closed) and keeps it; the admin token's session is never checked (issue 47).
func TestSessionFollowsUser(t *testing.T) {
	d := &directory{
		tokens: map[string]string{"tok-ann": "usr_ann", "tok-bob": "usr_bob"},
		now: map[string]*Who{"usr_ann": {User: "usr_ann", Role: "team_admin", Teams: []string{"search"}},
			"usr_bob": {User: "usr_bob", Role: "viewer", Teams: []string{"ads"}}},
	}
	store := NewMemoryStore()
	replica := func() *Console {
		return New(Options{Check: check, Store: store, Personal: d.personal, Current: d.current})
	}
	a, b := replica(), replica()
	ann, csrf := signInAs(t, a, "tok-ann")
	bob, _ := signInAs(t, a, "tok-bob")
	root, _ := signInAs(t, a, adminToken)
	status := func(c *Console, ck *http.Cookie) (int, state) {
		t.Helper()
		w := httptest.NewRecorder()
		c.Handler().ServeHTTP(w, with("GET", "/console/session", ck, ""))
		var s state
		_ = json.Unmarshal(w.Body.Bytes(), &s)
		return w.Code, s
	}

	if got, ok := b.Authorize(with("POST", "/admin/keys", ann, csrf)); !ok || got.User != "usr_ann" || got.Token != "" {
		t.Fatalf("B: got %+v %v, want ann's session", got, ok)
	}
	if len(d.asked) != 1 || d.asked[0].Role != "team_admin" || d.asked[0].Token != "hash-of-tok-ann" {
		t.Errorf("Current was asked %+v, want ann as signed in, with her token's reference", d.asked)
	}

	// Moved to another team: the next call acts in it, on either replica.
	d.set("usr_ann", &Who{User: "usr_ann", Role: "team_admin", Teams: []string{"ads"}})
	if got, ok := a.Authorize(with("GET", "/admin/keys", ann, "")); !ok || strings.Join(got.Teams, ",") != "ads" {
		t.Errorf("A after the move: got %+v %v, want ann in ads", got, ok)
	}
	if code, s := status(b, ann); code != 200 || !s.SignedIn || s.Who == nil || strings.Join(s.Who.Teams, ",") != "ads" {
		t.Errorf("GET /console/session after the move: got %d %+v, want ann in ads", code, s.Who)
	}

	// The users' store down: refused (fail closed), the session kept for when it is back.
	d.down = true
	if _, ok := b.Authorize(with("GET", "/admin/keys", ann, "")); ok {
		t.Error("authorized with the users' store down")
	}
	if code, _ := status(a, ann); code != http.StatusServiceUnavailable {
		t.Errorf("GET /console/session with the users' store down: got %d, want 503", code)
	}
	d.down = false
	if _, ok := b.Authorize(with("GET", "/admin/keys", ann, "")); !ok || store.Len() != 3 {
		t.Errorf("the store back: got refused or a session lost (%d stored, want 3)", store.Len())
	}

	// Demoted: the session ends, on both replicas, and leaves the Store.
	d.set("usr_ann", &Who{User: "usr_ann", Role: "viewer", Teams: []string{"ads"}})
	if _, ok := a.Authorize(with("GET", "/admin/keys", ann, "")); ok {
		t.Error("A: a demoted user's session authorized")
	}
	if _, ok := b.Authorize(with("GET", "/admin/keys", ann, "")); ok || store.Len() != 2 {
		t.Errorf("B: a demoted user's session authorized, or kept (%d stored, want 2)", store.Len())
	}
	if code, s := status(b, ann); code != 200 || s.SignedIn {
		t.Errorf("GET /console/session of the ended session: got %d %+v, want signed out", code, s)
	}

	// Bob's token revoked: his session ends; the admin token's never asks Current.
	delete(d.tokens, "tok-bob")
	if _, ok := b.Authorize(with("GET", "/admin/keys", bob, "")); ok {
		t.Error("a session of a revoked token authorized")
	}
	asked := len(d.asked)
	if got, ok := b.Authorize(with("GET", "/admin/keys", root, "")); !ok || got.User != Admin.User || got.Role != Admin.Role {
		t.Errorf("the admin token's session: got %+v %v", got, ok)
	}
	if len(d.asked) != asked {
		t.Error("Current was asked about the admin token's session")
	}
}

// EndUser ends every session of a user, on every replica, and no other's; the bootstrap
// admin's sessions are in no index.
func TestEndUser(t *testing.T) {
	d := &directory{tokens: map[string]string{"tok-ann": "usr_ann", "tok-bob": "usr_bob"},
		now: map[string]*Who{"usr_ann": {User: "usr_ann", Role: "member"}, "usr_bob": {User: "usr_bob", Role: "member"}}}
	store := NewMemoryStore()
	a := New(Options{Check: check, Store: store, Personal: d.personal})
	b := New(Options{Check: check, Store: store, Personal: d.personal})
	ann1, _ := signInAs(t, a, "tok-ann")
	ann2, _ := signInAs(t, b, "tok-ann")
	bob, _ := signInAs(t, a, "tok-bob")
	root, _ := signInAs(t, b, adminToken)
	if err := a.EndUser(context.Background(), Admin.User); err != nil || store.Len() != 4 {
		t.Fatalf("EndUser of the bootstrap admin: %v, %d stored; want nothing ended", err, store.Len())
	}
	if err := b.EndUser(context.Background(), "usr_ann"); err != nil {
		t.Fatal(err)
	}
	for name, ck := range map[string]*http.Cookie{"ann's first": ann1, "ann's second": ann2} {
		if ok(a.Authorize(with("GET", "/admin/keys", ck, ""))) || ok(b.Authorize(with("GET", "/admin/keys", ck, ""))) {
			t.Errorf("%s session outlives EndUser", name)
		}
	}
	for name, ck := range map[string]*http.Cookie{"bob's": bob, "the admin token's": root} {
		if !ok(a.Authorize(with("GET", "/admin/keys", ck, ""))) {
			t.Errorf("%s session ended with ann's", name)
		}
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if len(store.m) != 2 || len(store.byUser) != 1 || len(store.byUser["usr_bob"]) != 1 {
		t.Errorf("got %d sessions and index %v, want bob's and the admin's, bob's alone indexed", len(store.m), store.byUser)
	}
}

// The memory store's index follows its sessions: a session deleted, or swept at its end,
// leaves it.
func TestMemoryStoreIndex(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := NewMemoryStore()
		_ = s.Put(ctx, "a", "usr_ann", []byte("1"), time.Hour)
		_ = s.Put(ctx, "b", "usr_ann", []byte("2"), time.Minute)
		_ = s.Put(ctx, "c", "usr_bob", []byte("3"), time.Hour)
		_ = s.Delete(ctx, "c")
		time.Sleep(time.Minute)                         // b's end
		_ = s.Put(ctx, "d", "", []byte("4"), time.Hour) // sweeps b
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.byUser) != 1 || len(s.byUser["usr_ann"]) != 1 {
			t.Errorf("got index %v, want ann's session a alone", s.byUser)
		}
	})
}
