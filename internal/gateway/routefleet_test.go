package gateway_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
)

// fleetAdmin is the admin token of the fleet's replicas, for GET /admin/health, and fleetKey
// the virtual key of the clients.
const fleetAdmin, fleetKey = "route-fleet-admin", "route-fleet-key-Hn4kZ8pQ"

// serveKeyed is serve, with fleetKey on every request that has no Authorization: as from a
// client configured with the key (chat sends none).
func serveKeyed(t *testing.T, yaml string, vars map[string]string) string {
	t.Helper()
	h := build(t, yaml, vars, io.Discard)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			r.Header.Set("Authorization", "Bearer "+fleetKey)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// ewmas is each target's peak EWMA at the gateway at url, in ms, as GET /admin/health shows
// it: this replica's samples merged with the fleet's.
func ewmas(t *testing.T, url string) map[string]float64 {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/admin/health", nil)
	req.Header.Set("Authorization", "Bearer "+fleetAdmin)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var h struct {
		Targets []struct {
			Target string  `json:"target"`
			EWMA   float64 `json:"ewma_ms"`
		} `json:"targets"`
	}
	if err := json.NewDecoder(res.Body).Decode(&h); err != nil || res.StatusCode != 200 {
		t.Fatalf("GET /admin/health: status %d, %v", res.StatusCode, err)
	}
	out := map[string]float64{}
	for _, tg := range h.Targets {
		out[tg.Target] = tg.EWMA
	}
	return out
}

// route: latency on a fleet (issue 49): three replicas sharing their samples through one
// Redis, each target behind a real toxiproxy (toxiproxy_test.go) whose latency toxic slows
// it, requests round-robin over the replicas. After a slows by 300 ms, at least 85% of the
// next 200 requests go to b, the requests that taught the fleet included; after a is restored and b slowed, to a. After each change a new replica,
// which served none of the slow requests, knows the slow target from the fleet's samples
// before its first request, and routes to the fast one.
func TestRouteLatencyFleet(t *testing.T) {
	srv := redistest.Start(t)
	x := startToxiproxy(t)
	a, b := x.proxy(t, "a", newSlowable(t).URL), x.proxy(t, "b", newSlowable(t).URL)
	sum := sha256.Sum256([]byte(fleetKey))
	yaml := `
auth: {admin_token: ` + fleetAdmin + `}
keys: [{name: fleet, hash: ` + hex.EncodeToString(sum[:]) + `}]
providers:
  a: {kind: openai, base_url: "${A}/v1", api_key: sk-test-a}
  b: {kind: openai, base_url: "${B}/v1", api_key: sk-test-b}
models:
  pool:
    affinity: off
    targets:
      - {group: [a/m, b/m], route: latency}
      - b/m
redis: {url: "${REDIS_URL}", timeout: 2s, on_failure: open}
`
	vars := map[string]string{"A": a.URL, "B": b.URL, "REDIS_URL": srv.URL}
	// replica starts one more gateway; the name makes its field in the shared hash its own.
	replica := func(name string) string {
		t.Setenv("SLUICE_REPLICA", name)
		return serveKeyed(t, yaml, vars)
	}
	fleet := []string{replica("r1"), replica("r2"), replica("r3")}
	warm := servedRound(t, fleet, 30)

	// newcomer starts a replica once the change is learned, waits for its first exchange
	// (the fleet publishes every fallback.DefaultShareEvery), checks that it sees slow as
	// the slower before it served anything, and counts 20 requests it routes.
	newcomer := func(name, slow, fast string) map[string]int {
		t.Helper()
		url := replica(name)
		deadline := time.Now().Add(10 * time.Second) // the bound on learning
		for {
			time.Sleep(fallback.DefaultShareEvery / 4)
			e := ewmas(t, url)
			if e[slow] > e[fast] {
				t.Logf("%s before its first request: ewma %v ms", name, e)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s, which served nothing: ewma %v ms, want %s slower than %s from the fleet's samples",
					name, e, slow, fast)
			}
		}
		return served(t, url, 20)
	}

	a.slow(t, 300*time.Millisecond)
	one := servedRound(t, fleet, 200)
	r4 := newcomer("r4", "a/m", "b/m")
	a.slow(t, 0)
	b.slow(t, 300*time.Millisecond)
	two := servedRound(t, fleet, 200)
	r5 := newcomer("r5", "b/m", "a/m")
	t.Logf("warm-up %v; a slowed: %v, then r4 %v; a restored and b slowed: %v, then r5 %v", warm, one, r4, two, r5)
	if one["b/m"] < 170 {
		t.Errorf("a slowed by 300 ms: b/m served %d of 200 over 3 replicas, want at least 170", one["b/m"])
	}
	if two["a/m"] < 170 {
		t.Errorf("b slowed by 300 ms: a/m served %d of 200 over 3 replicas, want at least 170", two["a/m"])
	}
	if r4["b/m"] < 17 {
		t.Errorf("a slowed, a new replica: b/m served %d of 20, want at least 17", r4["b/m"])
	}
	if r5["a/m"] < 17 {
		t.Errorf("b slowed, a new replica: a/m served %d of 20, want at least 17", r5["a/m"])
	}
}
