package usage_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
	"github.com/sluice-gw/sluice/internal/usage"
)

// A hold (a batch's estimate) weighs on its key's budget until it is released: another
// must fit whole beside it, a call is refused once spending and holds reach the cap, a
// call within the hold passes while it keeps some and its cost is drawn from it (once per
// draw's id), a release frees what is left (once), and a hold that ended holds nothing.
// On this process's budgets and on Redis's.
func TestHolds(t *testing.T) {
	stores := map[string]func(t *testing.T) usage.Budgets{
		"memory": func(*testing.T) usage.Budgets { return &usage.MemoryBudgets{} },
		"redis": func(t *testing.T) usage.Budgets {
			s, err := redisstore.New(redisstore.Options{URL: redistest.Start(t).URL, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s.Budgets()
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			b, ctx := open(t), context.Background()
			capped := usage.Budget{Daily: 1000, Monthly: 5000}
			now := time.Now()
			until := now.Add(time.Hour)
			// total is what the key's day holds, spent and held: what a call capped at 1 is refused with.
			total := func() int64 {
				t.Helper()
				v, err := b.Reserve(ctx, usage.NewReservation("k", usage.Budget{Daily: 1}, 0, now))
				if err != nil || v.OK {
					t.Fatalf("probe: %+v %v", v, err)
				}
				return v.Spent
			}
			reserve := func(amount int64, within string) (usage.Reservation, usage.Verdict) {
				t.Helper()
				r := usage.NewReservation("k", capped, amount, now)
				r.Within = within
				v, err := b.Reserve(ctx, r)
				if err != nil {
					t.Fatal(err)
				}
				return r, v
			}
			r, _ := reserve(100, "")
			_ = b.Settle(ctx, r, 100)
			h := usage.NewHold("k", capped, 900, until)
			for range 2 { // taken twice: held once
				if v, err := b.Hold(ctx, h); err != nil || !v.OK {
					t.Fatalf("hold of 900 beside 100 spent: %+v %v", v, err)
				}
			}
			if got := total(); got != 1000 {
				t.Errorf("held and spent %d, want 1000", got)
			}
			if v, _ := b.Hold(ctx, usage.NewHold("k", capped, 1, until)); v.OK || v.Over != "daily" || v.Spent != 1000 {
				t.Errorf("a second hold: %+v, want refused, daily, 1000", v)
			}
			if v, _ := b.Hold(ctx, usage.NewHold("k", usage.Budget{Monthly: 5000}, 4001, until)); v.OK || v.Over != "monthly" {
				t.Errorf("a hold over the month: %+v, want refused, monthly", v)
			}
			if _, v := reserve(10, ""); v.OK {
				t.Errorf("a call beside the hold: passed, want refused (1000 of 1000)")
			}
			r, v := reserve(50, h.ID)
			if !v.OK {
				t.Fatalf("a call within the hold: %+v, want it to pass", v)
			}
			if got := total(); got != 1050 {
				t.Errorf("with the call within reserved: %d, want 1050", got)
			}
			_ = b.Settle(ctx, r, 300)
			for range 2 { // one draw, written twice
				if err := b.Draw(ctx, h, r.ID, 300); err != nil {
					t.Fatal(err)
				}
			}
			if got := total(); got != 1000 {
				t.Errorf("after a charge of 300 drawn from the hold: %d, want 1000 (400 spent, 600 held)", got)
			}
			if err := b.Draw(ctx, h, "other", 5000); err != nil {
				t.Fatal(err)
			}
			if got := total(); got != 400 {
				t.Errorf("a hold drawn past its amount: %d, want 400 (it keeps 0)", got)
			}
			if _, v := reserve(10, h.ID); !v.OK {
				t.Errorf("within a hold that keeps nothing, over no cap yet: want the cap's check, which passes")
			}
			for range 2 {
				if err := b.Release(ctx, h); err != nil {
					t.Fatal(err)
				}
			}
			if got := total(); got != 410 {
				t.Errorf("after the release: %d, want 410", got)
			}
			if err := b.Draw(ctx, h, "late", 100); err != nil || total() != 410 {
				t.Errorf("a draw after the release: %v, %d, want nothing drawn", err, total())
			}
			if v, err := b.Hold(ctx, usage.NewHold("k", capped, 900, now.Add(-time.Second))); err != nil || !v.OK || total() != 410 {
				t.Errorf("a hold that ended: %+v %v, total %d, want it to hold nothing", v, err, total())
			}
		})
	}
}
