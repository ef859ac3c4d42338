package server_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/console"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
)

// session is a console session's cookie and CSRF token.
type session struct {
	cookie *http.Cookie
	csrf   string
}

// consoleSignIn signs in to the console at url with token and returns the session.
func consoleSignIn(t *testing.T, url, token string) session {
	t.Helper()
	resp, err := http.Post(url+"/console/session", "application/json", strings.NewReader(`{"token":"`+token+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s struct{ CSRF string }
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil || resp.StatusCode != 200 || len(resp.Cookies()) != 1 || s.CSRF == "" {
		t.Fatalf("sign-in: got %d %v, want 200, a cookie and a CSRF token", resp.StatusCode, err)
	}
	return session{resp.Cookies()[0], s.CSRF}
}

// call sends one admin API request with the session (its CSRF token on a change).
func (s session) call(t *testing.T, method, url, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(s.cookie)
	if method != "GET" {
		req.Header.Set(console.CSRFHeader, s.csrf)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return send(t, req)
}

// stored reports whether Redis holds the session (under the digest of its cookie).
func stored(t *testing.T, srv *redistest.Server, s session) bool {
	t.Helper()
	sum := sha256.Sum256([]byte(s.cookie.Value))
	n, err := srv.Do("EXISTS", "sluice:{console}:session:"+hex.EncodeToString(sum[:]))
	if err != nil {
		t.Fatal(err)
	}
	return n == ":1"
}

// made is the id (and, for a token, the secret) of what an admin API call created.
func made(t *testing.T, r reply, what string) (id, secret string) {
	t.Helper()
	var v struct{ ID, Token string }
	if r.status != 201 || json.Unmarshal(r.body, &v) != nil || v.ID == "" {
		t.Fatalf("%s: got %d %s, want 201 and an id", what, r.status, r.body)
	}
	return v.ID, v.Token
}

// A user's console session ends with the user, on every replica at once (issue 47): two
// gateways on one real Redis; each session is made on replica A (gw[0]) with a personal
// token, the user changed through replica B (gw[1]) with the admin token, and the session
// refused on A at the next call (and on B). Today's code let it list and create keys for
// the rest of its 12 hours.
func TestFleetConsoleSessionEndsWithUser(t *testing.T) {
	srv := redistest.Start(t)
	gw := fleet(t, srv, "", "closed", "", nil)
	for _, team := range []string{"search", "ads"} {
		if r := do(t, "POST", gw[1]+"/admin/teams", admin, `{"name":"`+team+`"}`); r.status != 201 {
			t.Fatalf("POST /admin/teams: got %d %s", r.status, r.body)
		}
	}
	// user makes a team_admin of search with a personal token, signed in on A: its
	// session lists keys and makes one there, and B serves it too.
	user := func(t *testing.T) (id, tokenID string, s session) {
		t.Helper()
		id, _ = made(t, do(t, "POST", gw[1]+"/admin/users", admin, `{"email":"ann@example.com","role":"team_admin","teams":["search"]}`), "POST /admin/users")
		tokenID, secret := made(t, do(t, "POST", gw[1]+"/admin/users/"+id+"/tokens", admin, `{"name":"laptop"}`), "POST tokens")
		s = consoleSignIn(t, gw[0], secret)
		if !stored(t, srv, s) {
			t.Fatal("the session is not in Redis")
		}
		if r := s.call(t, "POST", gw[0]+"/admin/keys", `{"name":"k","team":"search"}`); r.status != 201 {
			t.Fatalf("the session makes a key of its team: got %d, want 201", r.status)
		}
		if r := s.call(t, "GET", gw[1]+"/admin/keys", ""); r.status != 200 {
			t.Fatalf("replica B lists keys with A's session: got %d, want 200", r.status)
		}
		return id, tokenID, s
	}
	ended := func(t *testing.T, s session, what string) {
		t.Helper()
		if r := s.call(t, "POST", gw[0]+"/admin/keys", `{"name":"k2","team":"search"}`); r.status != 401 {
			t.Errorf("%s: the old session makes a key on A: got %d, want 401", what, r.status)
		}
		for i, url := range gw {
			if r := s.call(t, "GET", url+"/admin/keys", ""); r.status != 401 {
				t.Errorf("%s: the old session lists keys on replica %d: got %d, want 401", what, i, r.status)
			}
		}
		if r := s.call(t, "GET", gw[0]+"/console/session", ""); r.status != 200 || strings.Contains(string(r.body), `"signed_in":true`) {
			t.Errorf("%s: GET /console/session: got %d %s, want signed out", what, r.status, r.body)
		}
	}

	t.Run("deleted", func(t *testing.T) {
		id, _, s := user(t)
		other := consoleSignIn(t, gw[1], admin) // the admin token's session: no user behind it
		if r := do(t, "DELETE", gw[1]+"/admin/users/"+id, admin, ""); r.status != 200 {
			t.Fatalf("DELETE /admin/users: got %d %s", r.status, r.body)
		}
		if stored(t, srv, s) {
			t.Error("the deleted user's session is still in Redis: the deletion did not end it")
		}
		ended(t, s, "deleted")
		if r := other.call(t, "GET", gw[0]+"/admin/keys", ""); r.status != 200 {
			t.Errorf("the admin token's session after a user's deletion: got %d, want 200", r.status)
		}
		for _, kv := range srv.Dump(t) {
			if strings.HasPrefix(kv, "sluice:{console}:user:") {
				t.Errorf("Redis still holds a session index: %s", kv)
			}
		}
	})

	t.Run("demoted", func(t *testing.T) {
		id, _, s := user(t)
		if r := do(t, "PATCH", gw[1]+"/admin/users/"+id, admin, `{"role":"viewer"}`); r.status != 200 {
			t.Fatalf("PATCH role: got %d %s", r.status, r.body)
		}
		if stored(t, srv, s) {
			t.Error("the demoted user's session is still in Redis: the role change did not end it")
		}
		ended(t, s, "demoted") // a role change ends the sessions: the next one acts as a viewer
	})

	t.Run("demoted behind the index's back", func(t *testing.T) {
		// The user's record changed in the shared store by other means than the admin API
		// (no session ended through the index): the check at every call refuses it all the
		// same.
		id, _, s := user(t)
		rec := `{"id":"` + id + `","email":"ann@example.com","role":"viewer","teams":["search"],"source":"api"}`
		if _, err := srv.Do("HSET", "sluice:{users}:by-id", id, rec); err != nil {
			t.Fatal(err)
		}
		ended(t, s, "demoted in Redis")
	})

	t.Run("token revoked", func(t *testing.T) {
		id, tokenID, s := user(t)
		// Another token of the user's, revoked: the session signed in with the first lives.
		spare, _ := made(t, do(t, "POST", gw[1]+"/admin/users/"+id+"/tokens", admin, `{"name":"spare"}`), "POST tokens")
		if r := do(t, "DELETE", gw[1]+"/admin/users/"+id+"/tokens/"+spare, admin, ""); r.status != 200 {
			t.Fatalf("DELETE the spare token: got %d %s", r.status, r.body)
		}
		if r := s.call(t, "GET", gw[0]+"/admin/keys", ""); r.status != 200 {
			t.Fatalf("another token revoked: got %d, want 200", r.status)
		}
		if r := do(t, "DELETE", gw[1]+"/admin/users/"+id+"/tokens/"+tokenID, admin, ""); r.status != 200 {
			t.Fatalf("DELETE the session's token: got %d %s", r.status, r.body)
		}
		ended(t, s, "token revoked")
	})

	t.Run("moved to another team", func(t *testing.T) {
		// The same role, other teams: the session lives and acts with the teams the user
		// has now, never the ones of its sign-in.
		id, _, s := user(t)
		if r := do(t, "PATCH", gw[1]+"/admin/users/"+id, admin, `{"teams":["ads"]}`); r.status != 200 {
			t.Fatalf("PATCH teams: got %d %s", r.status, r.body)
		}
		if r := s.call(t, "POST", gw[0]+"/admin/keys", `{"name":"k3","team":"search"}`); r.status != 403 {
			t.Errorf("a key of the team the user left: got %d, want 403", r.status)
		}
		if r := s.call(t, "GET", gw[0]+"/admin/teams/search", ""); r.status != 404 {
			t.Errorf("GET the team the user left: got %d, want 404", r.status)
		}
		if r := s.call(t, "POST", gw[0]+"/admin/keys", `{"name":"k4","team":"ads"}`); r.status != 201 {
			t.Errorf("a key of the user's new team: got %d, want 201", r.status)
		}
	})
}
