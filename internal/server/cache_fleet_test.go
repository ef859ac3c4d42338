package server_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
)

// cacheFleet is two replicas sharing one Redis in front of one mock upstream.
func cacheFleet(t *testing.T, srv *redistest.Server, extra string) ([2]string, *mockllm.Server) {
	t.Helper()
	mock := mockllm.New(mockllm.Options{})
	ms := httptest.NewServer(mock)
	t.Cleanup(ms.Close)
	yaml := cacheConfig + "redis: {url: \"${REDIS_URL}\", timeout: 2s, on_failure: open}\n" + extra
	vars := map[string]string{"MOCK_URL": ms.URL, "REDIS_URL": srv.URL}
	return [2]string{serveGate(t, yaml, vars, time.Minute, nil), serveGate(t, yaml, vars, time.Minute, nil)}, mock
}

// An answer one replica stored is a hit on the other, streamed and not, with the same
// bytes; with Redis down the cache is skipped: misses, and every answer still served.
func TestCacheSharedByReplicas(t *testing.T) {
	srv := redistest.Start(t)
	urls, mock := cacheFleet(t, srv, "")
	body := `{"model":"cached","messages":[{"role":"user","content":"Fleet."}],"stream":true,"stream_options":{"include_usage":true}}`
	plain := `{"model":"cached","messages":[{"role":"user","content":"Fleet."}]}`
	miss := cachePost(t, urls[0], "/v1/chat/completions", body)
	hit := cachePost(t, urls[1], "/v1/chat/completions", body)
	if miss.header.Get("X-Sluice-Cache") != "miss" || hit.header.Get("X-Sluice-Cache") != "hit" || hit.body != miss.body {
		t.Fatalf("got %q then %q on the other replica:\n%s\nwant miss then hit with the same stream:\n%s",
			miss.header.Get("X-Sluice-Cache"), hit.header.Get("X-Sluice-Cache"), hit.body, miss.body)
	}
	if r := cachePost(t, urls[1], "/v1/chat/completions", plain); r.header.Get("X-Sluice-Cache") != "hit" || r.status != 200 {
		t.Errorf("plain on the other replica: got %d %q, want 200 hit", r.status, r.header.Get("X-Sluice-Cache"))
	}
	if n := mock.Calls("text?len=300&chunk=7"); n != 1 {
		t.Errorf("got %d upstream calls, want 1", n)
	}
	srv.Stop(t)
	for i := range 3 {
		r := cachePost(t, urls[i%2], "/v1/chat/completions", plain)
		if r.status != 200 || r.header.Get("X-Sluice-Cache") != "miss" {
			t.Errorf("Redis down, request %d: got %d %q, want 200 miss", i, r.status, r.header.Get("X-Sluice-Cache"))
		}
	}
	if n := mock.Calls("text?len=300&chunk=7"); n != 4 {
		t.Errorf("Redis down: got %d upstream calls, want 4 (every request)", n)
	}
	// Identical requests at once on both replicas: answered, coalescing on each replica at
	// most, never an error.
	replies := make([]cacheReply, 8)
	var wg sync.WaitGroup
	for i := range replies {
		wg.Add(1)
		go func() { defer wg.Done(); replies[i] = cachePost(t, urls[i%2], "/v1/chat/completions", body) }()
	}
	wg.Wait()
	for i, r := range replies {
		if got := r.header.Get("X-Sluice-Cache"); r.status != 200 || (got != "miss" && got != "coalesced") || !strings.Contains(r.body, "[DONE]") {
			t.Errorf("Redis down, request %d at once: got %d %q:\n%s\nwant 200, miss or coalesced, the whole stream", i, r.status, got, r.body)
		}
	}
}

// Under scope key one virtual key never gets another's answer; under scope global every
// key shares it; under team the keys of one team do.
func TestCacheScopes(t *testing.T) {
	const k1, k2, k3 = "sk-sluice-cache-one", "sk-sluice-cache-two", "sk-sluice-cache-three"
	url, _ := mockGateway(t, `
  per-key: {targets: [mock/echo], cache: {}}
  shared: {targets: [mock/echo], cache: {scope: global}}
  team: {targets: [mock/echo], cache: {scope: team}}
keys:
  - {name: one, hash: `+auth.Hash(k1)+`, models: ["*"], metadata: {team: red}}
  - {name: two, hash: `+auth.Hash(k2)+`, models: ["*"], metadata: {team: red}}
  - {name: three, hash: `+auth.Hash(k3)+`, models: ["*"], metadata: {team: blue}}
`)
	for i, tt := range []struct{ alias, key, want string }{
		{"per-key", k1, "miss"}, {"per-key", k1, "hit"}, {"per-key", k2, "miss"}, {"per-key", k2, "hit"},
		{"shared", k1, "miss"}, {"shared", k2, "hit"}, {"shared", k3, "hit"},
		{"team", k1, "miss"}, {"team", k2, "hit"}, {"team", k3, "miss"},
	} {
		r := cachePost(t, url, "/v1/chat/completions", `{"model":"`+tt.alias+`","messages":[{"role":"user","content":"Scope."}]}`,
			"Authorization", "Bearer "+tt.key)
		if got := r.header.Get("X-Sluice-Cache"); r.status != 200 || got != tt.want {
			t.Errorf("step %d (%s): got %d %q, want 200 %q", i, tt.alias, r.status, got, tt.want)
		}
	}
}

// A hit counts as a request for the key's rate limit but spends no tokens: the token
// reservation of a hit is given back whole.
func TestCacheHitAccounting(t *testing.T) {
	const key = "sk-sluice-cache-limits"
	url, mock := mockGateway(t, `
  c: {targets: [mock/echo], cache: {}}
keys:
  - {name: k, hash: `+auth.Hash(key)+`, models: ["*"], limits: {rpm: 4, tpm: 100000}}
auth: {admin_token: `+admin+`}
`)
	var remaining []string
	for i, want := range []int{200, 200, 200, 200, 429} {
		r := cachePost(t, url, "/v1/chat/completions", `{"model":"c","messages":[{"role":"user","content":"Count me."}],"max_tokens":50}`,
			"Authorization", "Bearer "+key)
		if r.status != want {
			t.Fatalf("request %d: got %d, want %d (hits count against rpm)", i+1, r.status, want)
		}
		remaining = append(remaining, r.header.Get("X-Ratelimit-Remaining-Tokens"))
	}
	// Each request shows what is left after its own reservation: after the miss spent its
	// tokens, every hit gives its reservation back, so the hits all see the same.
	if remaining[1] != remaining[2] || remaining[2] != remaining[3] || remaining[0] == remaining[1] {
		t.Errorf("got remaining tokens %v, want the miss to spend and the hits to spend nothing", remaining)
	}
	if n := mock.Calls("echo"); n != 1 {
		t.Errorf("got %d upstream calls, want 1", n)
	}
	// GET /admin/stats: the alias's hit ratio on this replica.
	if r := do(t, "GET", url+"/admin/stats", admin, ""); !strings.Contains(string(r.body),
		`"cache":[{"alias":"c","hits":3,"coalesced":0,"misses":1,"bypassed":0,"hit_ratio":0.75}]`) {
		t.Errorf("got /admin/stats %d %s, want the alias's cache counts and a hit ratio of 0.75", r.status, r.body)
	}
	// The account: four requests, three of them cache hits that saved the miss's tokens.
	day := time.Now().UTC().Format("2006-01-02")
	r := do(t, "GET", url+"/admin/usage?group_by=alias&from="+day+"&to="+day, admin, "")
	var report struct {
		Data []struct {
			Alias        string
			Requests     int64
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
			CacheHits    int64 `json:"cache_hits"`
			SavedTokens  int64 `json:"saved_tokens"`
		}
	}
	if err := json.Unmarshal([]byte(r.body), &report); err != nil || len(report.Data) != 1 {
		t.Fatalf("got %d %s, want one line", r.status, r.body)
	}
	l := report.Data[0]
	if l.Requests != 4 || l.CacheHits != 3 || l.InputTokens+l.OutputTokens == 0 || l.SavedTokens != 3*(l.InputTokens+l.OutputTokens) {
		t.Errorf("got %+v, want 4 requests, 3 cache hits saving 3 times the miss's tokens", l)
	}
}

// mockGateway serves a gateway with the mock provider and models, the rest of its YAML
// (the aliases under models:, then more top-level blocks).
func mockGateway(t *testing.T, models string) (string, *mockllm.Server) {
	t.Helper()
	mock := mockllm.New(mockllm.Options{})
	ms := httptest.NewServer(mock)
	t.Cleanup(ms.Close)
	yaml := "providers:\n  mock: {kind: openai-compatible, base_url: \"${MOCK_URL}/v1\"}\nmodels:" + models
	return serveGate(t, yaml, map[string]string{"MOCK_URL": ms.URL}, time.Minute, nil), mock
}

// DELETE /admin/cache clears one alias's answers, or all of them; it needs the admin token.
func TestCacheAdminClear(t *testing.T) {
	const key = "sk-sluice-cache-admin"
	url, mock := mockGateway(t, `
  x: {targets: [mock/echo], cache: {}}
  y: {targets: [mock/echo], cache: {}}
keys:
  - {name: k, hash: `+auth.Hash(key)+`, models: ["*"]}
auth: {admin_token: `+admin+`}
`)
	ask := func(alias string) string {
		r := cachePost(t, url, "/v1/chat/completions", `{"model":"`+alias+`","messages":[{"role":"user","content":"Clear."}]}`,
			"Authorization", "Bearer "+key)
		return r.header.Get("X-Sluice-Cache")
	}
	clear := func(query string, token string) reply {
		return do(t, "DELETE", url+"/admin/cache"+query, token, "")
	}
	ask("x")
	ask("y")
	if r := clear("?alias=x", key); r.status != 401 {
		t.Errorf("with a virtual key: got %d, want 401", r.status)
	}
	if r := clear("?alias=x", admin); r.status != 200 || strings.TrimSpace(string(r.body)) != `{"object":"cache.cleared","alias":"x","deleted":1}` {
		t.Errorf("got %d %s, want x's one entry deleted", r.status, r.body)
	}
	if got, other := ask("x"), ask("y"); got != "miss" || other != "hit" {
		t.Errorf("after clearing x: got x %q, y %q; want miss, hit", got, other)
	}
	if r := clear("", admin); r.status != 200 || strings.TrimSpace(string(r.body)) != `{"object":"cache.cleared","alias":null,"deleted":2}` {
		t.Errorf("got %d %s, want both entries deleted", r.status, r.body)
	}
	if got := ask("y"); got != "miss" {
		t.Errorf("after clearing all: got y %q, want miss", got)
	}
	if n := mock.Calls("echo"); n != 4 {
		t.Errorf("got %d upstream calls, want 4", n)
	}
}
