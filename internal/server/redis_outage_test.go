package server_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
	"github.com/sluice-gw/sluice/internal/server"
)

// replicas are two gateways sharing srv, as fleet makes them, with their Redis stores.
func replicas(t *testing.T, srv *redistest.Server, policy, timeout, extra string, log *logBuffer) ([2]string, [2]*redisstore.Store) {
	t.Helper()
	if log == nil {
		log = &logBuffer{} // not a nil *logBuffer in an io.Writer
	}
	// The spool holds more writes than the outages here can make on any machine (a fast one
	// serves thousands of requests a second, two writes each): past its bound the store drops
	// by design (redis.spool), which is not what these tests are about.
	yaml := simConfig + "auth: {admin_token: " + admin + "}\n" +
		"redis: {url: \"${REDIS_URL}\", timeout: " + timeout + ", on_failure: " + policy + ", spool: 1000000}\n" + extra
	vars := map[string]string{"REDIS_URL": srv.URL}
	var urls [2]string
	var stores [2]*redisstore.Store
	for i := range urls {
		var s *server.Server
		urls[i], s = serveServer(t, yaml, vars, time.Hour, log)
		stores[i] = server.RedisStore(s)
	}
	return urls, stores
}

// back waits until both replicas' breakers closed and their spools are written: the
// breaker probes once a second, so about a second after Redis answers again.
func back(t *testing.T, stores [2]*redisstore.Store, gw [2]string) {
	t.Helper()
	for i, url := range gw {
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			r := do(t, "GET", url+"/readyz", "", "")
			if r.status == 200 && string(r.body) == `{"status":"ready"}` && stores[i].Spooled() == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("replica %d: got readyz %d %s and %d records spooled 20s after Redis came back, want ready and none",
					i, r.status, r.body, stores[i].Spooled())
			}
		}
	}
}

// nano reads a USD amount as nano-USD.
func nano(s string) int64 {
	f, _ := strconv.ParseFloat(s, 64)
	return int64(math.Round(f * 1e9))
}

// Redis killed for 3 s under a steady load over two replicas (on_failure: open): every
// request served is in the account once Redis is back, with its tokens and cost, none
// twice, and the key's budget holds exactly their cost.
func TestFleetUsageThroughOutage(t *testing.T) {
	srv := redistest.Start(t)
	var log logBuffer
	secret := auth.NewSecret()
	gw, stores := replicas(t, srv, "open", "5s", "prices: {sim/echo: {input: 3, output: 7}}\n"+
		"keys: [{name: k, hash: "+auth.Hash(secret)+", budget: {daily_usd: 1000}}]\n", &log)
	var mu sync.Mutex
	var served, input, output, cost int64
	var sent atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				r := do(t, "POST", gw[(w+i)%2]+"/v1/chat/completions", secret, chatBody("default", false, ""))
				sent.Add(1)
				if r.status != 200 {
					t.Errorf("got %d %s, want 200 (open: local state while Redis is down)", r.status, r.body)
					continue
				}
				var c struct {
					Usage struct {
						PromptTokens     int64 `json:"prompt_tokens"`
						CompletionTokens int64 `json:"completion_tokens"`
					}
				}
				_ = json.Unmarshal(r.body, &c)
				mu.Lock()
				served++
				input += c.Usage.PromptTokens
				output += c.Usage.CompletionTokens
				cost += nano(r.header.Get("X-Sluice-Cost-Usd"))
				mu.Unlock()
			}
		})
	}
	// until n more requests were sent
	more := func(n int64) {
		for target := sent.Load() + n; sent.Load() < target; time.Sleep(5 * time.Millisecond) {
		}
	}
	more(50)
	srv.Stop(t)
	outage := sent.Load()
	time.Sleep(3 * time.Second) // the outage, not a wait for something
	outage = sent.Load() - outage
	srv.Start(t)
	back(t, stores, gw)
	more(50)
	close(stop)
	wg.Wait()
	t.Logf("%d requests served, %d during the 3 s outage", served, outage)
	if outage < 20 {
		t.Fatalf("got %d requests during the outage, want a steady load through it", outage)
	}
	back(t, stores, gw)
	// The last records are written just after their answers left: wait for the count.
	var rep struct {
		Total struct {
			Requests     int64       `json:"requests"`
			InputTokens  int64       `json:"input_tokens"`
			OutputTokens int64       `json:"output_tokens"`
			CostUSD      json.Number `json:"cost_usd"`
		} `json:"total"`
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r := do(t, "GET", gw[0]+"/admin/usage?group_by=key", admin, "")
		if err := json.Unmarshal(r.body, &rep); err != nil {
			t.Fatalf("got %d %s from /admin/usage: %v", r.status, r.body, err)
		}
		if rep.Total.Requests >= served || time.Now().After(deadline) {
			break
		}
	}
	if got, want := fmt.Sprint(rep.Total.Requests, rep.Total.InputTokens, rep.Total.OutputTokens, nano(rep.Total.CostUSD.String())),
		fmt.Sprint(served, input, output, cost); got != want {
		t.Errorf("got requests, input, output tokens and nano-USD %s in /admin/usage, want %s: every request served, once", got, want)
	}
	for i, s := range stores {
		if s.Dropped() != 0 {
			t.Errorf("replica %d: got %d records dropped, want none", i, s.Dropped())
		}
	}
	id := "cfg_" + auth.Hash(secret)[:16]
	want := fmt.Sprintf("sluice:{budget:%s}:day:%s = %d", id, time.Now().UTC().Format("2006-01-02"), cost)
	if dump := strings.Join(srv.Dump(t), "\n"); !strings.Contains(dump, want) {
		t.Errorf("got Redis without %q: the budget holds every call's cost, once", want)
	}
	if strings.Contains(log.String(), "usage records dropped") {
		t.Errorf("got records dropped in the log:\n%s", log.String())
	}
}

// Redis hung (SIGSTOP) under two replicas: once each replica's breaker is open, no request
// waits on Redis; open serves from local state, closed answers 503 redis_unavailable at
// once. After SIGCONT the breakers close and the shared limit holds again.
func TestFleetHungRedis(t *testing.T) {
	for _, policy := range []string{"open", "closed"} {
		t.Run(policy, func(t *testing.T) {
			srv := redistest.Start(t)
			secret := auth.NewSecret()
			gw, stores := replicas(t, srv, policy, "1s", "keys: [{name: k, hash: "+auth.Hash(secret)+", limits: {rpm: 5}}]\n", nil)
			chat := func(i int) reply {
				return do(t, "POST", gw[i%2]+"/v1/chat/completions", secret, chatBody("default", false, ""))
			}
			for i := range 3 {
				if r := chat(i); r.status != 200 {
					t.Fatalf("before: request %d: got %d %s, want 200", i, r.status, r.body)
				}
			}
			srv.Pause(t)
			check := func(when string, i int, r reply) {
				t.Helper()
				switch {
				case policy == "open" && r.status != 200:
					t.Errorf("open, %s, request %d: got %d %s, want 200 from local state", when, i, r.status, r.body)
				case policy == "closed" && (r.status != 503 || r.errCode() != "redis_unavailable"):
					t.Errorf("closed, %s, request %d: got %d %s, want 503 redis_unavailable", when, i, r.status, r.body)
				}
			}
			// The first request on each replica waits for the timeout: it opens the breaker.
			for i := range 2 {
				check("opening", i, chat(i))
			}
			var waited [2]int64
			for i, s := range stores {
				if waited[i] = s.Waited(); waited[i] < 1 {
					t.Errorf("replica %d: got %d calls that waited, want the one that opened the breaker", i, waited[i])
				}
			}
			for i := range 4 { // 2 more each: 3 of the 5 of the local limits in all
				check("hung", i, chat(i))
			}
			for i, s := range stores {
				if got := s.Waited(); got != waited[i] {
					t.Errorf("replica %d: got %d calls that waited for Redis, want %d: none once the breaker is open", i, got, waited[i])
				}
				t.Logf("replica %d: %d calls waited, %d probes", i, s.Waited(), s.Probes())
			}
			srv.Resume(t)
			back(t, stores, gw)
			// 3 of 5 counted before, and the requests that timed out may have landed since:
			// at most 2 pass of 6, where local limits would let 4 or more through.
			statuses := map[int]int{}
			for i := range 6 {
				statuses[chat(i).status]++
			}
			if statuses[200] > 2 || statuses[200]+statuses[429] != 6 {
				t.Errorf("after SIGCONT: got statuses %v, want at most 2 × 200 and the rest 429 (the shared limit)", statuses)
			}
		})
	}
}
