package server_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
)

const admin = "admin-token-for-tests"

// fleet is two gateways sharing one Redis (replicas behind a load balancer): simConfig
// with more models, an admin token, the on_failure policy, and extra top-level config.
func fleet(t *testing.T, srv *redistest.Server, models, policy, extra string, log *logBuffer) [2]string {
	t.Helper()
	if log == nil {
		log = &logBuffer{} // not a nil *logBuffer in an io.Writer
	}
	yaml := simConfig + models + "auth: {admin_token: " + admin + "}\n" +
		"redis: {url: \"${REDIS_URL}\", timeout: 5s, on_failure: " + policy + "}\n" + extra
	vars := map[string]string{"REDIS_URL": srv.URL}
	return [2]string{serveGate(t, yaml, vars, time.Hour, log), serveGate(t, yaml, vars, time.Hour, log)}
}

// 100 concurrent requests over two replicas against 60 per hour: exactly 60 pass.
func TestFleetRequestLimit(t *testing.T) {
	srv := redistest.Start(t)
	var log logBuffer
	gw := fleet(t, srv, "", "closed", "", &log)
	_, secret := createKey(t, gw[0], admin, `{"name":"hourly","rpm":60}`)
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			r := do(t, "POST", gw[i%2]+"/v1/chat/completions", secret, chatBody("default", i%3 == 0, ""))
			if r.status == 429 {
				if ra, _ := strconv.Atoi(r.header.Get("Retry-After")); ra < 3500 || r.header.Get("X-Ratelimit-Remaining-Requests") != "0" {
					t.Errorf("got a 429 with Retry-After %q and headers %v, want about an hour and 0 left", r.header.Get("Retry-After"), r.header)
				}
			}
			mu.Lock()
			statuses[r.status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if statuses[200] != 60 || statuses[429] != 40 || len(statuses) != 2 {
		t.Errorf("got statuses %v, want exactly 60 × 200 and 40 × 429", statuses)
	}
	noSecret(t, srv, &log, secret)
}

// noSecret checks that neither Redis nor the logs hold the key in clear.
func noSecret(t *testing.T, srv *redistest.Server, log *logBuffer, secret string) {
	t.Helper()
	dump := srv.Dump(t)
	if len(dump) == 0 {
		t.Errorf("got an empty Redis, want the key record and the limit logs there")
	}
	for _, kv := range dump {
		if strings.Contains(kv, secret) || strings.Contains(kv, strings.TrimPrefix(secret, auth.Prefix)) {
			t.Errorf("Redis holds the key in clear: %s", kv)
		}
	}
	if strings.Contains(log.String(), strings.TrimPrefix(secret, auth.Prefix)) {
		t.Errorf("the log holds the key in clear")
	}
}

// Tokens per window over two replicas: what the answers report adds up to at most the limit
// plus one request's reservation, and the shared log ends reconciled to exactly that usage.
func TestFleetTokenLimit(t *testing.T) {
	srv := redistest.Start(t)
	var log logBuffer
	gw := fleet(t, srv, "", "closed", "", &log)
	const tpm = 1000
	id, secret := createKey(t, gw[0], admin, fmt.Sprintf(`{"name":"tokens","tpm":%d}`, tpm))
	body := chatBody("default", false, `,"max_tokens":40`)
	reservation := int64(len(body)+3)/4 + 40
	var mu sync.Mutex
	var used, ok, limited int64
	var wg sync.WaitGroup
	// 8 clients, 20 requests each, over both replicas: concurrent reservations, and enough
	// requests to spend the whole limit once reservations are reconciled with the usage.
	for w := range 8 {
		wg.Go(func() {
			for i := range 20 {
				r := do(t, "POST", gw[(w+i)%2]+"/v1/chat/completions", secret, body)
				mu.Lock()
				switch r.status {
				case 200:
					var c struct {
						Usage struct {
							TotalTokens int64 `json:"total_tokens"`
						}
					}
					_ = json.Unmarshal(r.body, &c)
					used += c.Usage.TotalTokens
					ok++
				case 429:
					limited++
				default:
					t.Errorf("got %d %s, want 200 or 429", r.status, r.body)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if limited == 0 || ok == 0 {
		t.Fatalf("got %d passed and %d limited, want both (the test must reach the limit)", ok, limited)
	}
	t.Logf("%d answers used %d tokens, %d requests limited; one reservation is %d", ok, used, limited, reservation)
	if used > tpm+reservation {
		t.Errorf("got %d tokens used by %d answers, want at most %d (the limit and one reservation)", used, ok, tpm+reservation)
	}
	if used < tpm-2*reservation {
		t.Errorf("got %d tokens used, want close to the limit %d: reservations not given back?", used, tpm)
	}
	// Reconciliation runs once the handler is done, just after the answer left: wait for it.
	want := fmt.Sprintf("sluice:{key:%s}:tpm:sum = %d", id, used)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		dump := strings.Join(srv.Dump(t), "\n")
		if strings.Contains(dump, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("got Redis:\n%s\nwant %q: the reservations reconciled to the usage", dump, want)
		}
	}
	noSecret(t, srv, &log, secret)
}

// A cooldown one replica starts, the other honours: it skips the failing target at once.
func TestFleetCooldown(t *testing.T) {
	srv := redistest.Start(t)
	gw := fleet(t, srv, "  flaky: [\"sim/echo?fail=500\", sim/echo]\n", "closed", "", nil)
	_, secret := createKey(t, gw[0], admin, `{"name":"k"}`)
	for i := range 3 {
		r := do(t, "POST", gw[0]+"/v1/chat/completions", secret, chatBody("flaky", false, ""))
		if r.status != 200 || r.header.Get("X-Sluice-Attempts") != "2" {
			t.Fatalf("a, request %d: got %d with %s attempts, want 200 after falling back", i, r.status, r.header.Get("X-Sluice-Attempts"))
		}
	}
	r := do(t, "POST", gw[1]+"/v1/chat/completions", secret, chatBody("flaky", false, ""))
	if r.status != 200 || r.header.Get("X-Sluice-Attempts") != "1" || r.header.Get("X-Sluice-Target") != "sim/echo" {
		t.Errorf("b: got %d with %s attempts, target %s; want the cooling target skipped (1 attempt, sim/echo)",
			r.status, r.header.Get("X-Sluice-Attempts"), r.header.Get("X-Sluice-Target"))
	}
}

// Redis stopped mid-test, then back. open keeps serving (local limits, counted and logged
// once per replica); closed refuses with 503; once Redis is back the shared limit holds
// again, with what it counted before.
func TestFleetRedisOutage(t *testing.T) {
	for _, policy := range []string{"open", "closed"} {
		t.Run(policy, func(t *testing.T) {
			srv := redistest.Start(t)
			var log logBuffer
			secret := auth.NewSecret()
			gw := fleet(t, srv, "", policy, "keys: [{name: k, hash: "+auth.Hash(secret)+", limits: {rpm: 5}}]\n", &log)
			chat := func(i int) reply {
				return do(t, "POST", gw[i%2]+"/v1/chat/completions", secret, chatBody("default", i%2 == 1, ""))
			}
			for i := range 3 {
				if r := chat(i); r.status != 200 {
					t.Fatalf("before the outage, request %d: got %d %s, want 200", i, r.status, r.body)
				}
			}
			srv.Stop(t)
			for i := range 6 {
				r := chat(i)
				switch {
				case policy == "open" && r.status != 200:
					t.Errorf("open, outage, request %d: got %d %s, want 200 (local limits: 3 each)", i, r.status, r.body)
				case policy == "closed" && (r.status != 503 || r.errCode() != "redis_unavailable"):
					t.Errorf("closed, outage, request %d: got %d %s, want 503 redis_unavailable", i, r.status, r.body)
				}
			}
			wantReady := map[string]string{"open": `200 {"status":"degraded","redis":"unreachable","on_failure":"open"}`,
				"closed": `503 {"status":"unavailable","redis":"unreachable","on_failure":"closed"}`}[policy]
			for _, url := range gw {
				if r := do(t, "GET", url+"/readyz", "", ""); fmt.Sprintf("%d %s", r.status, r.body) != wantReady {
					t.Errorf("readyz during the outage: got %d %s, want %s", r.status, r.body, wantReady)
				}
			}
			if n := strings.Count(log.String(), `msg="redis unavailable"`); n != 2 {
				t.Errorf("got %d log lines about the outage, want 2 (one per replica):\n%s", n, log.String())
			}
			srv.Start(t)
			// Each replica's breaker probes Redis once a second: ready within about one.
			for _, url := range gw {
				for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
					if r := do(t, "GET", url+"/readyz", "", ""); r.status == 200 && string(r.body) == `{"status":"ready"}` {
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("readyz did not say ready within 5s of Redis coming back")
					}
				}
			}
			for i, want := range []int{200, 200, 429, 429} {
				if r := chat(i); r.status != want {
					t.Errorf("after the outage, request %d: got %d %s, want %d (3 of 5 counted before it)", i, r.status, r.body, want)
				}
			}
			if strings.Contains(log.String(), "panic") {
				t.Errorf("got a panic in the log:\n%s", log.String())
			}
			noSecret(t, srv, &log, secret)
		})
	}
}
