package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
	"github.com/sluice-gw/sluice/internal/usage"
)

// Two replicas add to the same rows; a report reads them back, whichever replica asks.
func TestUsageShared(t *testing.T) {
	forms(t, func(t *testing.T, srv backend) {
		a, b := replica(t, srv, false, nil).Usage(), replica(t, srv, false, nil).Usage()
		ctx := context.Background()
		l := usage.Labels{Key: "k1", Alias: "default", Target: "openai/gpt-4.1-mini"}
		var wg sync.WaitGroup
		for i := range 40 {
			wg.Go(func() {
				s := a
				if i%2 == 1 {
					s = b
				}
				c := usage.Counts{Requests: 1, InputTokens: 10, OutputTokens: 5, CostNano: 7, Errors: int64(i % 4 / 3)}
				if err := s.Add(ctx, "2026-06-01", l, c); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		// A label holding the separator cannot break the row format.
		odd := usage.Labels{Key: "k2", Alias: "a\x1fb", Target: ""}
		if err := b.Add(ctx, "2026-06-02", odd, usage.Counts{Requests: 1, Estimated: 1}); err != nil {
			t.Fatal(err)
		}
		day := func(s string) time.Time { d, _ := time.Parse(usage.DayLayout, s); return d }
		lines, total, err := usage.Report(ctx, a, usage.Query{From: day("2026-05-31"), To: day("2026-06-02"), GroupBy: usage.ByAlias})
		if err != nil {
			t.Fatal(err)
		}
		want := usage.Counts{Requests: 41, InputTokens: 400, OutputTokens: 200, CostNano: 280, Errors: 10, Estimated: 1}
		if total != want || len(lines) != 2 || lines[0].Name != "a b" || lines[1].Name != "default" || lines[1].Requests != 40 {
			t.Errorf("got %+v total %+v, want aliases \"a b\" and default, total %+v", lines, total, want)
		}
		for _, kv := range srv.Dump(t) {
			if strings.HasPrefix(kv, "sluice:{usage:") && !strings.HasPrefix(kv, "sluice:{usage:2026-06-0") {
				t.Errorf("got %s, want one hash per day", kv)
			}
		}
	})
}

// 50 concurrent calls on two replicas against a budget for about 10: one atomic script
// lets exactly as many through as one process would, and settles end at the real cost.
func TestBudgetsAcrossReplicas(t *testing.T) {
	forms(t, func(t *testing.T, srv backend) {
		bs := [2]*redisstore.Budgets{replica(t, srv, false, nil).Budgets(), replica(t, srv, false, nil).Budgets()}
		ctx := context.Background()
		now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
		var passed atomic.Int64
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Go(func() {
				r := usage.NewReservation("k", usage.Budget{Daily: 62, Monthly: 1000}, 6, now)
				v, err := bs[i%2].Reserve(ctx, r)
				if err != nil {
					t.Error(err)
					return
				}
				if !v.OK {
					if v.Over != "daily" || v.Spent < 62 {
						t.Errorf("got %+v, want refused on the day with at least 62 spent", v)
					}
					return
				}
				passed.Add(1)
				if err := bs[i%2].Settle(ctx, r, 5); err != nil { // each cost a little less than reserved
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if n := passed.Load(); n < 11 || n > 13 {
			t.Errorf("got %d through, want 11 to 13 (62 at 6 reserved and 5 spent each, the last passing by one)", n)
		}
		dump := strings.Join(srv.Dump(t), "\n")
		want := "sluice:{budget:k}:day:2026-06-01 = " + itoa(passed.Load()*5)
		if !strings.Contains(dump, want) || !strings.Contains(dump, "sluice:{budget:k}:month:2026-06 = "+itoa(passed.Load()*5)) {
			t.Errorf("got Redis:\n%s\nwant %q and the month alike", dump, want)
		}
		r := usage.NewReservation("k", usage.Budget{Monthly: 50}, 6, now)
		if v, _ := bs[0].Reserve(ctx, r); v.OK || v.Over != "monthly" {
			t.Errorf("monthly cap: got %+v, want refused", v)
		}
	})
}

func itoa(n int64) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		if n /= 10; n == 0 {
			return string(b)
		}
	}
}

// While Redis is down, budgets fall back to this replica's own under open and fail under
// closed; the account is spooled under either policy, never an answer held for it.
func TestBudgetsOutage(t *testing.T) {
	srv := redistest.Start(t)
	open, closed := replica(t, srv, true, nil), replica(t, srv, false, nil)
	srv.Stop(t)
	ctx := context.Background()
	r := usage.NewReservation("k", usage.Budget{Daily: 10}, 6, time.Now())
	local := open.Budgets()                          // one per server, as gateway.New makes it: its fallback is its own
	for i, want := range []bool{true, true, false} { // 0, 6, then 12 >= 10
		if v, err := local.Reserve(ctx, r); err != nil || v.OK != want {
			t.Errorf("open, reservation %d: got %+v %v, want ok %v from the local budget", i, v, err, want)
		}
	}
	if _, err := closed.Budgets().Reserve(ctx, r); !errors.Is(err, redisstore.ErrUnavailable) {
		t.Errorf("closed: got %v, want ErrUnavailable", err)
	}
	if err := closed.Usage().Add(ctx, "2026-06-01", usage.Labels{Key: "k"}, usage.Counts{Requests: 1}); err != nil || closed.Spooled() != 1 {
		t.Errorf("account: got %v and %d spooled, want the record spooled", err, closed.Spooled())
	}
	// Back up, so go-redis's background probes of the dead server end before the test does.
	srv.Start(t)
	for _, st := range []*redisstore.Store{open, closed} {
		for deadline := time.Now().Add(5 * time.Second); st.Ping(ctx) != nil; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the store did not reconnect within 5s")
			}
		}
	}
}

// A record with the caller's id (usage.WithRecord: an emulated batch's line, run again
// after its replica died) is added once, whichever replica adds it again; records without
// an id, or with another, are each added.
func TestUsageRecordOnce(t *testing.T) {
	forms(t, func(t *testing.T, srv backend) {
		a, b := replica(t, srv, false, nil).Usage(), replica(t, srv, false, nil).Usage()
		l := usage.Labels{Key: "k1", Alias: "batchy", Target: "mock/echo"}
		c := usage.Counts{Requests: 1, InputTokens: 6, OutputTokens: 6}
		line := usage.WithRecord(context.Background(), "batch:batch_1:7")
		for _, add := range []struct {
			s   *redisstore.Usage
			ctx context.Context
		}{{a, line}, {b, line}, {a, line}, {b, usage.WithRecord(context.Background(), "batch:batch_1:8")},
			{a, context.Background()}, {b, context.Background()}} {
			if err := add.s.Add(add.ctx, "2026-06-01", l, c); err != nil {
				t.Fatal(err)
			}
		}
		day, _ := time.Parse(usage.DayLayout, "2026-06-01")
		_, total, err := usage.Report(context.Background(), b, usage.Query{From: day, To: day, GroupBy: usage.ByAlias})
		if want := (usage.Counts{Requests: 4, InputTokens: 24, OutputTokens: 24}); err != nil || total != want {
			t.Errorf("got %+v (%v), want %+v: the line's record once, the others each", total, err, want)
		}
	})
}
