package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/logstore"
	"github.com/sluice-gw/sluice/internal/usage"
)

// policyAPI is an admin API over real stores (keys in memory, the request log in SQLite)
// with a key and a logged request of two teams, search and ads.
func policyAPI(t *testing.T) (API, map[string]func(method, path string, in req) (int, any, error)) {
	t.Helper()
	ctx := context.Background()
	st, err := logstore.Open(ctx, logstore.Options{URL: "sqlite://" + filepath.Join(t.TempDir(), "logs.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	keys := auth.NewKeys(nil, &auth.Memory{})
	now := time.Now().UTC()
	var recs []logstore.Record
	for _, team := range []string{"search", "ads"} {
		k := &auth.Key{ID: "key_" + team, Name: team, Hash: auth.Hash(team), Models: []string{"*"}, Team: team, CreatedAt: now}
		if err := keys.Create(ctx, k); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, logstore.Record{ID: "req_" + team, Time: now.Add(-time.Minute), KeyID: k.ID, KeyName: team, Team: team,
			Wire: "chat", Method: "POST", Path: "/v1/chat/completions", Alias: "default", Status: 200})
	}
	if err := st.Write(ctx, recs); err != nil {
		t.Fatal(err)
	}
	users := &auth.UserMemory{}
	teams := auth.NewTeams([]*auth.Team{{Name: "search"}, {Name: "ads"}}, &auth.TeamMemory{})
	a := API{Keys: Keys{Store: keys, Teams: teams}, Teams: Teams{Store: teams, Keys: keys, Users: users}, Logs: st, Users: users,
		Audit: logstore.NewAuditMemory(0), Usage: &usage.Memory{}}
	ops := map[string]func(method, path string, in req) (int, any, error){}
	call := func(method, path string, in req) (int, any, error) {
		for _, r := range a.Routes() {
			if r.Method == method && r.Path == path {
				return r.Op(auth.WithPrincipal(context.Background(), in.who), in.Input)
			}
		}
		t.Fatalf("no route %s %s", method, path)
		return 0, nil, nil
	}
	ops["call"] = call
	return a, ops
}

// req is an admin API call and who makes it.
type req struct {
	who *auth.Principal
	Input
}

func status(err error) int { return llm.HTTPStatus(err) }

func TestRolePolicyOnRoutes(t *testing.T) {
	_, ops := policyAPI(t)
	call := ops["call"]
	ta := &auth.Principal{User: "usr_ta", Role: auth.RoleTeamAdmin, Teams: []string{"search"}}
	viewer := &auth.Principal{User: "usr_v", Role: auth.RoleViewer, Teams: []string{"search"}}
	as := func(p *auth.Principal, in Input) req { return req{p, in} }

	// team_admin: their team's logs only, whatever the filter asks.
	_, v, err := call("GET", "/admin/logs", as(ta, Input{Query: url.Values{}}))
	if got := ids(t, v, err); got != "req_search" {
		t.Errorf("team_admin's logs: got %q, want req_search only", got)
	}
	_, v, err = call("GET", "/admin/logs", as(ta, Input{Query: url.Values{"key": {"key_ads"}}}))
	if got := ids(t, v, err); got != "" {
		t.Errorf("team_admin asking another team's key: got %q, want nothing", got)
	}
	if _, _, err := call("GET", "/admin/logs/:id", as(ta, Input{ID: "req_ads"})); status(err) != 404 {
		t.Errorf("another team's record: got %v, want 404", err)
	}
	if _, _, err := call("GET", "/admin/logs/:id", as(ta, Input{ID: "req_search"})); err != nil {
		t.Errorf("their team's record: %v", err)
	}
	// Keys: listed, read, changed: their team's; another team's id is a 404, as no key.
	_, v, err = call("GET", "/admin/keys", as(ta, Input{}))
	if err != nil || len(v.(map[string]any)["data"].([]Key)) != 1 {
		t.Errorf("team_admin's keys: got %v, %v; want search's only", v, err)
	}
	for _, m := range []string{"GET", "PATCH", "DELETE"} {
		if _, _, err := call(m, "/admin/keys/:id", as(ta, Input{ID: "key_ads", Body: []byte(`{"rpm":1}`)})); status(err) != 404 {
			t.Errorf("%s another team's key: got %v, want 404", m, err)
		}
	}
	if _, _, err := call("PATCH", "/admin/keys/:id", as(ta, Input{ID: "key_search", Body: []byte(`{"team":"ads"}`)})); status(err) != 403 {
		t.Errorf("moving a key into another team: got %v, want 403", err)
	}
	if _, _, err := call("POST", "/admin/keys", as(ta, Input{Body: []byte(`{"name":"x","team":"ads"}`)})); status(err) != 403 {
		t.Errorf("creating into another team: got %v, want 403", err)
	}
	_, v, err = call("POST", "/admin/keys", as(ta, Input{Body: []byte(`{"name":"x","team":"search"}`)}))
	if err != nil || v.(Key).Team == nil || *v.(Key).Team != "search" || v.(Key).Owner != "usr_ta" {
		t.Errorf("creating into their team: got %+v, %v", v, err)
	}
	// Config-wide routes: 403.
	for _, r := range [][2]string{{"DELETE", "/admin/cache"}, {"GET", "/admin/stats"}, {"POST", "/admin/users"}} {
		if _, _, err := call(r[0], r[1], as(ta, Input{Query: url.Values{}, Body: []byte(`{}`)})); status(err) != 403 {
			t.Errorf("team_admin %s %s: got %v, want 403", r[0], r[1], err)
		}
	}
	// Usage: of a key they see.
	if _, _, err := call("GET", "/admin/usage", as(ta, Input{Query: url.Values{"key": {"key_ads"}}})); status(err) != 404 {
		t.Errorf("usage of another team's key: got %v, want 404", err)
	}
	if _, _, err := call("GET", "/admin/usage", as(ta, Input{Query: url.Values{}})); err != nil {
		t.Errorf("usage without a key (their team's, TestUsageScope): got %v, want 200", err)
	}
	// A viewer changes nothing, even of their team: 403.
	for _, c := range []struct{ m, p, id string }{{"POST", "/admin/keys", ""}, {"PATCH", "/admin/keys/:id", "key_search"}, {"DELETE", "/admin/keys/:id", "key_search"}} {
		if _, _, err := call(c.m, c.p, as(viewer, Input{ID: c.id, Body: []byte(`{"name":"v"}`)})); status(err) != 403 {
			t.Errorf("viewer %s %s: got %v, want 403", c.m, c.p, err)
		}
	}
	if _, _, err := call("GET", "/admin/keys/:id", as(viewer, Input{ID: "key_search"})); err != nil {
		t.Errorf("viewer reading their team's key: %v", err)
	}
	// No principal at all: refused (fail closed).
	if _, _, err := call("GET", "/admin/keys", req{nil, Input{}}); status(err) != 403 {
		t.Errorf("no principal: got %v, want 403", err)
	}
}

func TestUsersAndTokens(t *testing.T) {
	a, ops := policyAPI(t)
	call := ops["call"]
	admin := func(in Input) req { return req{auth.Bootstrap, in} }
	_, v, err := call("POST", "/admin/users", admin(Input{Body: []byte(`{"email":"ann@example.com","role":"member","teams":["search"]}`)}))
	if err != nil {
		t.Fatal(err)
	}
	ann := v.(User)
	if ann.Source != "api" || ann.Role != auth.RoleMember {
		t.Fatalf("got %+v", ann)
	}
	for _, body := range []string{`{"role":"root"}`, `{"teams":[""]}`, `{"rol":"admin"}`, `null`} {
		if _, _, err := call("POST", "/admin/users", admin(Input{Body: []byte(body)})); status(err) != 400 {
			t.Errorf("%s: got %v, want 400", body, err)
		}
	}
	me := &auth.Principal{User: ann.ID, Role: auth.RoleMember, Teams: []string{"search"}}
	st, v, err := call("POST", "/admin/users/:id/tokens", req{me, Input{ID: ann.ID, Body: []byte(`{"name":"cli"}`)}})
	if err != nil || st != http.StatusCreated {
		t.Fatal(st, err)
	}
	tok := v.(Token)
	if !strings.HasPrefix(tok.Secret, auth.UserPrefix) || tok.ExpiresAt.Sub(time.Now()) < auth.DefaultTokenTTL-time.Minute {
		t.Fatalf("got %+v; want a secret once and the default expiry", tok)
	}
	// The list never shows the secret, nor its hash.
	_, v, err = call("GET", "/admin/users/:id/tokens", req{me, Input{ID: ann.ID}})
	b, _ := json.Marshal(v)
	if err != nil || strings.Contains(string(b), tok.Secret) || strings.Contains(string(b), auth.Hash(tok.Secret)) || !strings.Contains(string(b), tok.ID) {
		t.Fatalf("list: %s, %v", b, err)
	}
	// The token is the member's principal; a member's key is theirs.
	p, err := auth.NewAdmins("", a.Users).Principal(context.Background(), tok.Secret, time.Now())
	if err != nil || p.User != ann.ID {
		t.Fatal(p, err)
	}
	_, v, err = call("POST", "/admin/keys", req{p, Input{Body: []byte(`{"name":"mine","team":"search"}`)}})
	if err != nil || v.(Key).Owner != ann.ID {
		t.Fatalf("member's key: %+v, %v", v, err)
	}
	_, v, _ = call("GET", "/admin/keys", req{p, Input{}})
	if ks := v.(map[string]any)["data"].([]Key); len(ks) != 1 || ks[0].Name != "mine" {
		t.Errorf("member's keys: got %+v, want their own only (not their team's)", ks)
	}
	// Expiry: not in the past, not beyond a year.
	for _, body := range []string{`{"expires_at":"2020-01-01T00:00:00Z"}`, `{"expires_at":"` + time.Now().Add(400*24*time.Hour).Format(time.RFC3339) + `"}`} {
		if _, _, err := call("POST", "/admin/users/:id/tokens", req{me, Input{ID: ann.ID, Body: []byte(body)}}); status(err) != 400 {
			t.Errorf("%s: got %v, want 400", body, err)
		}
	}
	// Another user's tokens: hidden from a stranger, the admin revokes them.
	stranger := &auth.Principal{User: "usr_z", Role: auth.RoleMember}
	if _, _, err := call("GET", "/admin/users/:id/tokens", req{stranger, Input{ID: ann.ID}}); status(err) != 404 {
		t.Errorf("a stranger's view of the tokens: got %v, want 404", err)
	}
	if _, _, err := call("DELETE", "/admin/users/:id/tokens/:token", admin(Input{ID: ann.ID, Sub: tok.ID})); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.NewAdmins("", a.Users).Principal(context.Background(), tok.Secret, time.Now()); err == nil {
		t.Error("a revoked token still authenticates")
	}
	if _, _, err := call("PATCH", "/admin/users/:id", admin(Input{ID: ann.ID, Body: []byte(`{"role":"viewer"}`)})); err != nil {
		t.Fatal(err)
	}
	if _, _, err := call("DELETE", "/admin/users/:id", admin(Input{ID: ann.ID})); err != nil {
		t.Fatal(err)
	}
	if _, _, err := call("GET", "/admin/users/:id", admin(Input{ID: ann.ID})); status(err) != 404 {
		t.Errorf("deleted user: got %v, want 404", err)
	}
}

// ids are the record ids of a GET /admin/logs answer, comma-separated.
func ids(t *testing.T, v any, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	var page struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	_ = json.Unmarshal(b, &page)
	var out []string
	for _, r := range page.Data {
		out = append(out, r.ID)
	}
	return strings.Join(out, ",")
}
