package server_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
)

// budgetConfig prices sim/echo at 1 USD per answer token and none for the prompt, so a
// request's reservation (max_tokens 6 at that price) is exactly its cost: the mock answers
// "Hello there, gateway." (21 bytes), which it reports as 6 tokens.
const budgetConfig = simConfig + `prices: {sim/echo: {input: 0, output: 1000000}}
auth: {admin_token: ` + admin + `}
`

const perRequest = 6.0 // USD

// 50 concurrent requests against a key with a budget for about 10 stop at the budget,
// overspending by at most one reservation: in one process, and over two replicas sharing a
// real Redis. The refused get 429 budget_exceeded with x-should-retry: false.
func TestBudgetConcurrent(t *testing.T) {
	for _, shared := range []bool{false, true} {
		name := map[bool]string{false: "memory", true: "redis"}[shared]
		t.Run(name, func(t *testing.T) {
			secret := auth.NewSecret()
			yaml := budgetConfig + "keys: [{name: spender, hash: " + auth.Hash(secret) + ", budget: {daily_usd: 62, monthly_usd: 1000}}]\n"
			var gw [2]string
			var srv *redistest.Server
			if shared {
				srv = redistest.Start(t)
				yaml += "redis: {url: \"${REDIS_URL}\", timeout: 5s, on_failure: closed}\n"
				vars := map[string]string{"REDIS_URL": srv.URL}
				gw = [2]string{serveGate(t, yaml, vars, time.Hour, nil), serveGate(t, yaml, vars, time.Hour, nil)}
			} else {
				u := serveGate(t, yaml, nil, time.Hour, nil)
				gw = [2]string{u, u}
			}
			var mu sync.Mutex
			statuses := map[int]int{}
			var wg sync.WaitGroup
			for i := range 50 {
				wg.Go(func() {
					r := do(t, "POST", gw[i%2]+"/v1/chat/completions", secret, chatBody("default", i%2 == 0, `,"max_tokens":6`))
					if r.status == 429 && (r.errCode() != "budget_exceeded" || r.header.Get("X-Should-Retry") != "false" ||
						!strings.Contains(string(r.body), "Key 'spender' has used its budget of $62.00 for this day (UTC)")) {
						t.Errorf("got a 429 %s with x-should-retry %q, want budget_exceeded, false", r.body, r.header.Get("X-Should-Retry"))
					}
					mu.Lock()
					statuses[r.status]++
					mu.Unlock()
				})
			}
			wg.Wait()
			// Admitted while something is left: 10 × 6 = 60 < 62 lets an 11th through.
			if statuses[200] != 11 || statuses[429] != 39 {
				t.Errorf("got statuses %v, want 11 × 200 and 39 × 429", statuses)
			}
			id := "cfg_" + auth.Hash(secret)[:16]
			_, total := usageReport(t, gw[1], "key="+id)
			if spent := total.CostUSD; spent != 11*perRequest || spent > 62+perRequest {
				t.Errorf("got %v USD spent, want 66: the budget, passed by at most one reservation (%v)", spent, perRequest)
			}
			if total.Requests != 50 || total.Errors != 39 {
				t.Errorf("got %+v, want 50 requests of which 39 refused", total)
			}
			if shared {
				day := time.Now().UTC().Format("2006-01-02")
				want := "sluice:{budget:" + id + "}:day:" + day + " = 66000000000"
				for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
					dump := strings.Join(srv.Dump(t), "\n")
					if strings.Contains(dump, want) {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("got Redis:\n%s\nwant %q: every reservation settled to its cost", dump, want)
					}
				}
			}
		})
	}
}

// A spent budget refuses before any provider is called; a monthly cap counts too; the
// admin API shows and changes budgets.
func TestBudgetRefusesBeforeProvider(t *testing.T) {
	url, mock := meteredGateway(t, "prices: {mock/echo: {input: 1000000, output: 0}}\n")
	id, secret := createKey(t, url, admin, `{"name":"small","budget":{"daily_usd":100,"monthly_usd":0.5}}`)
	if r := do(t, "POST", url+"/v1/chat/completions", secret, chatBody("default", false, "")); r.status != 200 {
		t.Fatalf("first: got %d %s, want 200 (nothing spent yet)", r.status, r.body)
	}
	for _, stream := range []bool{false, true} {
		r := do(t, "POST", url+"/v1/chat/completions", secret, chatBody("default", stream, ""))
		if r.status != 429 || r.errCode() != "budget_exceeded" || !strings.Contains(string(r.body), "this month (UTC)") {
			t.Errorf("stream %v: got %d %s, want 429 budget_exceeded for the month", stream, r.status, r.body)
		}
	}
	if n := mock.Calls("echo"); n != 1 {
		t.Errorf("got %d upstream calls, want 1: a refused request is never sent", n)
	}
	r := do(t, "PATCH", url+"/admin/keys/"+id, admin, `{"budget":{"monthly_usd":0}}`)
	var k struct {
		Budget struct {
			DailyUSD   float64 `json:"daily_usd"`
			MonthlyUSD float64 `json:"monthly_usd"`
		} `json:"budget"`
	}
	if err := json.Unmarshal(r.body, &k); err != nil || r.status != 200 || k.Budget.DailyUSD != 100 || k.Budget.MonthlyUSD != 0 {
		t.Fatalf("PATCH budget: got %d %s, want daily 100 kept and monthly 0", r.status, r.body)
	}
	if r := do(t, "POST", url+"/v1/chat/completions", secret, chatBody("default", false, "")); r.status != 200 {
		t.Errorf("without a monthly cap: got %d %s, want 200 (6 of 100 USD spent today)", r.status, r.body)
	}
	// Two requests of 6 prompt tokens at 1 USD each: a daily cap of 10 is spent.
	do(t, "PATCH", url+"/admin/keys/"+id, admin, `{"budget":{"daily_usd":10}}`)
	if r := do(t, "POST", url+"/v1/chat/completions", secret, chatBody("default", false, "")); r.status != 429 || !strings.Contains(string(r.body), "this day (UTC) ($12.0000 spent") {
		t.Errorf("after the patch: got %d %s, want 429 for the day, 12 USD spent", r.status, r.body)
	}
	for _, body := range []string{`{"budget":{"daily_usd":-1}}`, `{"budget":{"weekly_usd":1}}`, `{"budget":5}`} {
		if r := do(t, "PATCH", url+"/admin/keys/"+id, admin, body); r.status != 400 {
			t.Errorf("PATCH %s: got %d %s, want 400", body, r.status, r.body)
		}
	}
}

// With Redis down, a budget is checked by this replica alone under open, and refuses the
// call under closed: it cannot tell what the fleet spent.
func TestBudgetRedisOutage(t *testing.T) {
	srv := redistest.Start(t)
	secret := auth.NewSecret()
	keys := "keys: [{name: spender, hash: " + auth.Hash(secret) + ", budget: {daily_usd: 62}}]\n"
	vars := map[string]string{"REDIS_URL": srv.URL}
	open := serveGate(t, budgetConfig+keys+"redis: {url: \"${REDIS_URL}\", timeout: 1s, on_failure: open}\n", vars, time.Hour, nil)
	closed := serveGate(t, budgetConfig+keys+"redis: {url: \"${REDIS_URL}\", timeout: 1s, on_failure: closed}\n", vars, time.Hour, nil)
	srv.Stop(t)
	for i, want := range []int{200, 200, 200} {
		if r := do(t, "POST", open+"/v1/chat/completions", secret, chatBody("default", false, `,"max_tokens":6`)); r.status != want {
			t.Errorf("open, request %d: got %d %s, want %d", i, r.status, r.body, want)
		}
	}
	r := do(t, "POST", closed+"/v1/chat/completions", secret, chatBody("default", false, `,"max_tokens":6`))
	if r.status != 503 || r.errCode() != "redis_unavailable" || !strings.Contains(string(r.body), "the key's budget") {
		t.Errorf("closed: got %d %s, want 503 redis_unavailable about the budget", r.status, r.body)
	}
	// Back up, so go-redis's background probes of the dead server end before the test does.
	srv.Start(t)
	for _, url := range []string{open, closed} {
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if r := do(t, "GET", url+"/readyz", "", ""); r.status == 200 && string(r.body) == `{"status":"ready"}` {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("readyz did not say ready within 5s of Redis coming back")
			}
		}
	}
}
