package objects

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/admit"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/cache"
	"github.com/sluice-gw/sluice/internal/dialect/batches"
	"github.com/sluice-gw/sluice/internal/dialect/files"
	"github.com/sluice-gw/sluice/internal/dialect/msgbatches"
	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
	"github.com/sluice-gw/sluice/internal/usage"
)

// twoBudgets are the budgets of two replicas: this process's (one MemoryBudgets, which
// both share), or Redis's (one server, each replica its own connection); held counts the
// open holds of a key where the store can tell (-1: it cannot).
type twoBudgets struct {
	a, b usage.Budgets
	held func(key string) int
}

// budgetStores are the stores the budget tests run on.
var budgetStores = map[string]func(t *testing.T) twoBudgets{
	"memory": func(*testing.T) twoBudgets {
		m := &usage.MemoryBudgets{}
		return twoBudgets{a: m, b: m, held: func(string) int { return -1 }}
	},
	"redis": func(t *testing.T) twoBudgets {
		srv := redistest.Start(t)
		open := func() usage.Budgets {
			s, err := redisstore.New(redisstore.Options{URL: srv.URL, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s.Budgets()
		}
		return twoBudgets{a: open(), b: open(), held: func(key string) int {
			n, err := srv.Do("HLEN", "sluice:{budget:"+key+"}:held")
			if err != nil {
				t.Fatal(err)
			}
			var v int
			fmt.Sscanf(n, ":%d", &v)
			return v
		}}
	},
}

// spent is what key's budget holds today, spent and held (nano-USD): what a reservation
// capped at one nano-USD is refused with, or 0 when it passes.
func spent(t *testing.T, b usage.Budgets, key string) int64 {
	t.Helper()
	r := usage.NewReservation(key, usage.Budget{Daily: 1}, 0, time.Now())
	v, err := b.Reserve(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if v.OK {
		_ = b.Settle(context.Background(), r, 0)
		return 0
	}
	return v.Spent
}

// hold1200 is an input file of 3 lines, 1200 bytes: 300 tokens, whose estimate at
// gpt-4o-mini's $2 per million input tokens is 600,000 nano-USD.
func hold1200(t *testing.T) string {
	var b strings.Builder
	for i := range 3 {
		fmt.Fprintf(&b, `{"custom_id":"r%d","pad":"%s"}`+"\n", i, strings.Repeat("x", 372))
	}
	if b.Len() != 1200 {
		t.Fatalf("input of %d bytes, want 1200", b.Len())
	}
	return b.String()
}

// A batch's estimate is held against its key's daily budget B from its creation until its
// results are charged (issue 48): with an estimate of 0.6B, a second batch is refused at
// creation (429 in OpenAI's shape, the upstream never sees it); the first's results, read
// by two replicas at once and twice each, are charged once, the rest of its hold freed,
// and a new batch fits; a cancelled batch frees its hold. The budget's figures are exact
// to the nano-USD.
func TestBatchHoldsBudget(t *testing.T) {
	for name, stores := range budgetStores {
		t.Run(name, func(t *testing.T) {
			bs := stores(t)
			f, srv := newFake(t)
			f.usage = `{"prompt_tokens":100,"completion_tokens":5,"total_tokens":105}` // 100*1000 + 5*4000 nano-USD at the batch price
			records := &cache.Memory{MaxBytes: 1 << 20}
			sa, sb := replica(t, srv.URL, records), replica(t, srv.URL, records)
			pa := &admit.Policy{Prices: policy.Prices, Budgets: bs.a}
			pb := &admit.Policy{Prices: policy.Prices, Budgets: bs.b}
			key := &auth.Key{ID: "k-hold-" + name, Name: "holder", Models: []string{"*"}, DailyUSD: 0.001}
			if usage.Nano(key.DailyUSD) != 1_000_000 {
				t.Fatalf("B = %d nano-USD", usage.Nano(key.DailyUSD))
			}
			body, ct := upload(hold1200(t))
			fid := field(t, callWith(t, pa, sa, key, "POST", files.Path, "", body, ct).body, "id")
			create := func(p *admit.Policy, s *Service) answer {
				return callWith(t, p, s, key, "POST", batches.Path, "", strings.NewReader(`{"input_file_id":"`+fid+`","endpoint":"/v1/chat/completions"}`), "application/json")
			}
			first := create(pa, sa)
			if first.status != 200 {
				t.Fatalf("first batch: %d %s", first.status, first.body)
			}
			if got := spent(t, bs.a, key.ID); got != 600_000 {
				t.Errorf("after the first batch: %d nano-USD spent and held, want its estimate, 600000", got)
			}
			second := create(pb, sb)
			if second.status != 429 || !strings.Contains(second.body, `"budget_exceeded"`) || !strings.Contains(second.body, `"insufficient_quota"`) {
				t.Errorf("second batch: %d %s, want 429 budget_exceeded", second.status, second.body)
			}
			if len(f.batches) != 1 {
				t.Errorf("the upstream got %d batches, want 1", len(f.batches))
			}
			if got := spent(t, bs.b, key.ID); got != 600_000 {
				t.Errorf("after the refusal: %d nano-USD, want 600000", got)
			}
			out := field(t, first.body, "output_file_id")
			var wg sync.WaitGroup
			var mu sync.Mutex
			var charged float64
			for _, r := range []struct {
				p *admit.Policy
				s *Service
			}{{pa, sa}, {pb, sb}, {pa, sa}, {pb, sb}} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					a := callWith(t, r.p, r.s, key, "GET", files.Content, out, nil, "")
					if a.status != 200 || strings.Count(a.body, "\n") != 3 {
						t.Errorf("read: %d %s", a.status, a.body)
					}
					mu.Lock()
					charged += a.rec.CostUSD
					mu.Unlock()
				}()
			}
			wg.Wait()
			if usage.Nano(charged) != 360_000 {
				t.Errorf("the reads charged %d nano-USD in all, want 3 lines at 120000", usage.Nano(charged))
			}
			if got := spent(t, bs.a, key.ID); got != 360_000 {
				t.Errorf("after the results: %d nano-USD spent and held, want the real cost, 360000", got)
			}
			if n := bs.held(key.ID); n > 0 {
				t.Errorf("%d holds open after the results were read, want none", n)
			}
			third := create(pb, sb)
			if third.status != 200 {
				t.Fatalf("a batch after the first's results: %d %s, want 200 (360000 + 600000 fit)", third.status, third.body)
			}
			if got := spent(t, bs.b, key.ID); got != 960_000 {
				t.Errorf("after the third batch: %d nano-USD, want 960000", got)
			}
			if n := bs.held(key.ID); n != 1 && n != -1 {
				t.Errorf("%d holds open, want the third batch's", n)
			}
			c := callWith(t, pa, sa, key, "POST", batches.Cancel, field(t, third.body, "id"), nil, "")
			if c.status != 200 || field(t, c.body, "status") != "cancelled" {
				t.Fatalf("cancel: %d %s", c.status, c.body)
			}
			if got := spent(t, bs.a, key.ID); got != 360_000 {
				t.Errorf("after the cancel: %d nano-USD, want 360000: the cancelled batch's hold freed", got)
			}
			if n := bs.held(key.ID); n > 0 {
				t.Errorf("%d holds open after the cancel, want none", n)
			}
		})
	}
}

// A message batch holds its estimate from its creation: a team's budget is held too
// (both refuse the batch that does not fit); reading its results charges them, once, and
// frees both holds.
func TestMessageBatchHoldsBudget(t *testing.T) {
	for name, stores := range budgetStores {
		t.Run(name, func(t *testing.T) {
			bs := stores(t)
			_, srv := newFake(t)
			s := replica(t, srv.URL, &cache.Memory{MaxBytes: 1 << 20})
			team := &auth.Team{Name: "ml-" + name, DailyUSD: 1, Models: []string{"*"}}
			p := &admit.Policy{Prices: policy.Prices, Budgets: bs.a, Teams: auth.NewTeams([]*auth.Team{team}, &auth.TeamMemory{})}
			key := &auth.Key{ID: "k-msg-" + name, Name: "claude", Models: []string{"*"}, DailyUSD: 0.02, Team: team.Name}
			// 800 bytes: 200 tokens at $3 per million: 600,000 nano-USD held.
			one := `{"requests":[{"custom_id":"a","params":{"model":"claude","max_tokens":9,"messages":[{"role":"user","content":"` +
				strings.Repeat("y", 800-117) + `"}]}}]}`
			if len(one) != 800 {
				t.Fatalf("%d bytes", len(one))
			}
			c := callWith(t, p, s, key, "POST", msgbatches.Path, "", strings.NewReader(one), "application/json")
			if c.status != 200 {
				t.Fatalf("create: %d %s", c.status, c.body)
			}
			for _, k := range []string{key.ID, team.Scope()} {
				if got := spent(t, bs.a, k); got != 600_000 {
					t.Errorf("%s after the creation: %d nano-USD, want 600000", k, got)
				}
			}
			r := callWith(t, p, s, key, "GET", msgbatches.Results, field(t, c.body, "id"), nil, "")
			// 1000 + 1000 tokens at $3 and $15 per million, half price: 9,000,000 nano-USD.
			if r.status != 200 || usage.Nano(r.rec.CostUSD) != 9_000_000 {
				t.Fatalf("results: %d, $%v", r.status, r.rec.CostUSD)
			}
			for _, k := range []string{key.ID, team.Scope()} {
				if got := spent(t, bs.a, k); got != 9_000_000 {
					t.Errorf("%s after the results: %d nano-USD, want the real cost, 9000000", k, got)
				}
				if n := bs.held(k); n > 0 {
					t.Errorf("%s: %d holds open, want none", k, n)
				}
			}
		})
	}
}
