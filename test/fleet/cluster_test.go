package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
	"github.com/sluice-gw/sluice/internal/tools/mcp/mcptest"
)

// clusterFleet is two replicas behind nginx on a 6-node Redis Cluster, with an upstream
// and an MCP server in the test process, so the test counts what reached them.
type clusterFleet struct {
	*fleet
	redis *redistest.Cluster
	mock  *mockllm.Server
	docs  *mcptest.Server
	dir   string
	conf  func(policy string) string // the replicas' configuration with redis.on_failure policy
}

// clusterConfig is the replicas' configuration; %s are the cluster's addresses,
// redis.on_failure, the mock's URL and the MCP server's. The budget model answers 24 bytes, 6 tokens, priced 1 USD
// each: a reservation of max_tokens 6 is exactly its cost. The Redis timeout is 1s, not the
// default 250ms: during a resharding MIGRATE blocks the two nodes while it moves a key (the
// resharded key's requests log holds thousands of entries), and on this 2-core machine,
// beside six Redis nodes, four replicas, nginx and other jobs, a call then waited past 250ms
// about once a run, which tripped a closed replica's breaker for a second (84 and 92 503s).
const clusterConfig = `listen: "${SLUICE_LISTEN}"
auth: {admin_token: "${SLUICE_ADMIN_TOKEN}"}
redis: {cluster: {addrs: [%s]}, on_failure: %s, timeout: 1s}
providers:
  mock: {kind: openai-compatible, base_url: "%s/v1"}
tools:
  docs: {mcp: {url: "%s"}}
prices: {"mock/text?len=24": {input: 0, output: 1000000}}
models:
  default: [mock/echo]
  slow: ["mock/text?len=400&chunk=8&delay=25ms"]
  budget: ["mock/text?len=24"]
  cached: {targets: ["mock/text?len=300&chunk=7&delay=20ms"], cache: {}}
`

func startClusterFleet(t *testing.T) *clusterFleet {
	t.Helper()
	if os.Getenv("SLUICE_FLEET_TEST") == "" {
		t.Skip("the fleet tests run with make test-fleet")
	}
	dir := t.TempDir()
	c, err := redistest.NewCluster(filepath.Join(dir, "redis"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cf := &clusterFleet{redis: c, mock: mockllm.New(mockllm.Options{}), dir: dir}
	ms := httptest.NewServer(cf.mock)
	t.Cleanup(ms.Close)
	cf.docs = mcptest.New(mcptest.Tool{Name: "fetch", Run: func(_ context.Context, args json.RawMessage, _ func(float64, float64, string)) (string, bool) {
		return "hits for " + string(args), false
	}}, mcptest.Tool{Name: "slow", Run: func(ctx context.Context, _ json.RawMessage, progress func(float64, float64, string)) (string, bool) {
		progress(1, 0, "started")
		<-ctx.Done()
		return "cancelled", true
	}})
	ds := httptest.NewServer(cf.docs)
	t.Cleanup(ds.Close)
	cf.conf = func(policy string) string {
		return fmt.Sprintf(clusterConfig, strings.Join(c.Addrs, ", "), policy, ms.URL, ds.URL+"/mcp")
	}
	return cf.with(t, "open")
}

// with starts another fleet of two replicas on the same cluster and upstreams, with
// redis.on_failure policy; the fleets before it go on running until the test ends.
func (f *clusterFleet) with(t *testing.T, policy string) *clusterFleet {
	t.Helper()
	cfg := filepath.Join(f.dir, "cluster-"+policy+".yaml")
	if err := os.WriteFile(cfg, []byte(f.conf(policy)), 0o600); err != nil {
		t.Fatal(err)
	}
	g := *f
	g.fleet = startFleet(t, 2, "FLEET_CONFIG="+cfg)
	return &g
}

// TestFleetCluster runs the fleet scenarios with the shared state on a Redis Cluster (3
// masters, 3 replicas), then kills a master under load: with on_failure open, then, on
// another fleet, closed; that fleet then runs while slots move.
func TestFleetCluster(t *testing.T) {
	f := startClusterFleet(t)
	t.Run("rpm exact across replicas", func(t *testing.T) { limitAcrossReplicas(t, f.fleet) })
	t.Run("tpm exact across replicas", func(t *testing.T) { tokensAcrossReplicas(t, f) })
	t.Run("budget exact across replicas", func(t *testing.T) { budgetAcrossReplicas(t, f) })
	t.Run("cache coalesced across replicas", func(t *testing.T) { coalescedAcrossReplicas(t, f) })
	t.Run("run resumed on another replica", func(t *testing.T) { resumeOnAnotherReplica(t, f.fleet) })
	t.Run("MCP session moves between replicas", func(t *testing.T) { mcpAcrossReplicas(t, f) })
	t.Run("master killed under load, open", func(t *testing.T) { masterKilled(t, f, true) })
	closed := f.with(t, "closed")
	t.Run("master killed under load, closed", func(t *testing.T) { masterKilled(t, closed, false) })
	t.Run("resharding under load", func(t *testing.T) { resharded(t, closed) })
}

// waitRedis polls the cluster's keys until one line is want (bounded).
func (f *clusterFleet) waitRedis(t *testing.T, want string) {
	t.Helper()
	var dump []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var err error
		if dump, err = f.redis.Dump(); err == nil && strings.Contains(strings.Join(dump, "\n"), want) {
			return
		}
	}
	t.Errorf("got Redis:\n%s\nwant %q", strings.Join(dump, "\n"), want)
}

// tokensAcrossReplicas: 160 requests of 8 clients over both replicas against tpm 1000 pass
// the limit by at most one reservation, and the key's window holds exactly the tokens the
// answers used once the reservations are reconciled.
func tokensAcrossReplicas(t *testing.T, f *clusterFleet) {
	const tpm = 1000
	id, key := f.keyID(t, fmt.Sprintf(`{"name":"tokens","tpm":%d}`, tpm))
	body := `{"model":"default","max_tokens":40,"messages":[{"role":"user","content":"hello fleet"}]}`
	reservation := int64(len(body)+3)/4 + 40
	var mu sync.Mutex
	var used, ok, limited int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				r := do(t, "POST", f.url+"/v1/chat/completions", key, body)
				var c struct {
					Usage struct {
						TotalTokens int64 `json:"total_tokens"`
					}
				}
				_ = json.Unmarshal(r.body, &c)
				mu.Lock()
				switch r.status {
				case 200:
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
	if ok == 0 || limited == 0 || used > tpm+reservation {
		t.Errorf("got %d answers using %d tokens and %d limited; want both, and at most %d tokens", ok, used, limited, tpm+reservation)
	}
	f.waitRedis(t, fmt.Sprintf("sluice:{key:%s}:tpm:sum = %d", id, used))
}

// budgetAcrossReplicas: 50 concurrent requests of 6 USD each against a daily budget of 62:
// 11 admitted (admitted while something is left), 39 refused, 66 USD in the account.
func budgetAcrossReplicas(t *testing.T, f *clusterFleet) {
	id, key := f.keyID(t, `{"name":"spender","budget":{"daily_usd":62}}`)
	body := `{"model":"budget","max_tokens":6,"messages":[{"role":"user","content":"hello fleet"}]}`
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			r := do(t, "POST", f.url+"/v1/chat/completions", key, body)
			mu.Lock()
			codes[r.status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[200] != 11 || codes[429] != 39 {
		t.Errorf("got %v, want exactly 11 x 200 and 39 x 429", codes)
	}
	u := f.usage(t, id, func(u usageTotal) bool { return u.Requests == 50 })
	if u.CostUSD != 66 || u.Errors != 39 {
		t.Errorf("got %+v, want 50 requests, 39 refused, 66 USD", u)
	}
}

// coalescedAcrossReplicas: 50 identical requests at once over both replicas make one
// upstream call, and every client gets its bytes.
func coalescedAcrossReplicas(t *testing.T, f *clusterFleet) {
	key := f.key(t, `{"name":"cache"}`)
	body := `{"model":"cached","messages":[{"role":"user","content":"hello fleet"}]}`
	replies := make([]reply, 50)
	var wg sync.WaitGroup
	for i := range replies {
		wg.Go(func() { replies[i] = do(t, "POST", f.url+"/v1/chat/completions", key, body) })
	}
	wg.Wait()
	replicas := map[string]int{}
	text := func(r reply) string { // each answer has an id of its own, the same text
		var c struct {
			Choices []struct{ Message struct{ Content string } }
		}
		if json.Unmarshal(r.body, &c) != nil || len(c.Choices) != 1 {
			return ""
		}
		return c.Choices[0].Message.Content
	}
	for i, r := range replies {
		replicas[r.header.Get("X-Sluice-Replica")]++
		if r.status != 200 || text(r) == "" || text(r) != text(replies[0]) {
			t.Errorf("request %d: got %d %q:\n%s\nwant 200 with the first answer's text", i, r.status, r.header.Get("X-Sluice-Cache"), r.body)
		}
	}
	if n := f.mock.Calls("text?len=300&chunk=7&delay=20ms"); n != 1 || len(replicas) != 2 {
		t.Errorf("got %d upstream calls for requests on replicas %v, want 1 for both replicas", n, replicas)
	}
}

// usageTotal is the total of GET /admin/usage, as far as these tests read it.
type usageTotal struct {
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	CostUSD  float64 `json:"cost_usd"`
}

// usage polls the key's account through nginx until done holds (bounded: records settle
// after the answer leaves, and the spool writes once Redis answers again).
func (f *fleet) usage(t *testing.T, id string, done func(usageTotal) bool) usageTotal {
	t.Helper()
	var u struct{ Total usageTotal }
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		r := do(t, "GET", f.url+"/admin/usage?key="+id, admin, "")
		if r.status == 200 && json.Unmarshal(r.body, &u) == nil && done(u.Total) {
			return u.Total
		}
	}
	t.Errorf("the usage of %s: got %+v, never what was wanted", id, u.Total)
	return u.Total
}

// settled reads the key's account through nginx until it holds still for a second (bounded:
// records settle after the answer leaves, and a spool writes once Redis answers again).
func (f *fleet) settled(t *testing.T, id string) usageTotal {
	t.Helper()
	var last usageTotal
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		u := f.usage(t, id, func(usageTotal) bool { return true })
		if u == last && u.Requests > 0 {
			return u
		}
		last = u
	}
	t.Errorf("the usage of %s: still moving after 30 s (%+v)", id, last)
	return last
}

// countedOnce waits until the key's account counts served requests (errors apart), then until
// it holds still, and checks that it counts exactly served. usage alone returns as soon as the
// count reaches served: a record counted twice, by the spool or by a write confirm.go runs
// again, arrives later, and would pass.
func (f *fleet) countedOnce(t *testing.T, id string, served int64) {
	t.Helper()
	// Unconfirmed writes are written again within a second or two of the old master
	// replicating from the new one: wait for them, then for the account to hold still.
	f.usage(t, id, func(u usageTotal) bool { return u.Requests-u.Errors >= served })
	u := f.settled(t, id)
	t.Logf("the account of %s: %d requests counted of %d served", id, u.Requests-u.Errors, served)
	if u.Requests-u.Errors != served {
		t.Errorf("the account of %s: got %+v, want %d requests counted (served), once each", id, u, served)
	}
}
