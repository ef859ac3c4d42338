package batch_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/batch"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// charging is the gateway's chain as far as budgets go: each line's request reserves
// within the holds its context carries, as admit does, and settles a cost of 100
// nano-USD through a usage.Meter (which draws it from the hold).
type charging struct {
	b    usage.Budgets
	next http.Handler
}

// daily is alice's daily budget in these tests.
var daily = usage.Budget{Daily: 1000}

func (c charging) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	res := usage.NewReservation(alice.ID, daily, 10, time.Now())
	for _, h := range usage.HoldsOf(ctx) {
		if h.Key == alice.ID {
			res.Within = h.ID
		}
	}
	if v, err := c.b.Reserve(ctx, res); err != nil || !v.OK {
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	c.next.ServeHTTP(w, r)
	m := usage.Meter{Cost: 100, Held: []usage.Reservation{res}}
	m.Settle(context.WithoutCancel(ctx), c.b)
}

// spentHeld is what alice's day holds, spent and held (nano-USD): what a hold that can
// never fit is refused with.
func spentHeld(t *testing.T, b usage.Budgets) int64 {
	t.Helper()
	v, err := b.Hold(context.Background(), usage.NewHold(alice.ID, usage.Budget{Daily: 1}, 2, time.Now().Add(time.Hour)))
	if err != nil || v.OK {
		t.Fatalf("probe: %+v, %v", v, err)
	}
	return v.Spent
}

// An emulated batch keeps the budget holds its creation's context carried (the files and
// batches service takes them): its lines run within them, each line's cost drawn from
// them, not counted twice; when it ends (completed, cancelled, failed) the runner releases
// what is left, so the budget holds what the lines cost, to the nano-USD.
func TestBatchHolds(t *testing.T) {
	for _, end := range []string{"completed", "cancelled", "failed"} {
		t.Run(end, func(t *testing.T) {
			eachStore(t, func(t *testing.T, newStore func() batch.Store) {
				b := &usage.MemoryBudgets{}
				// 200 spent first, then a hold of 800: the budget is full.
				r := usage.NewReservation(alice.ID, daily, 200, time.Now())
				if v, _ := b.Reserve(context.Background(), r); !v.OK {
					t.Fatal("the first reservation was refused")
				}
				hold := usage.NewHold(alice.ID, daily, 800, time.Now().Add(time.Hour))
				if v, _ := b.Hold(context.Background(), hold); !v.OK {
					t.Fatalf("hold: %+v", v)
				}
				h := &batch.Host{Store: newStore(), Alias: "sim"}
				up := newUpstream()
				input := lines(4)
				if end == "failed" {
					input += "not json\n"
				}
				if end == "cancelled" {
					up.hold = make(chan struct{})
				}
				f, err := upload(t, h, as(alice), "batch", "in.jsonl", strings.NewReader(input))
				if err != nil {
					t.Fatal(err)
				}
				var bo batchObj
				mustCall(t, h, usage.WithHolds(as(alice), []usage.Hold{hold}), llm.ObjectCall{Method: "POST", Path: "batches",
					Body: strings.NewReader(`{"input_file_id":"` + f["id"].(string) + `","endpoint":"/v1/chat/completions","completion_window":"24h"}`)}, &bo)
				runner(t, newStore(), charging{b: b, next: up}, time.Minute, func(r *batch.Runner) { r.Budgets = b })
				want := int64(200 + 4*100)
				switch end {
				case "cancelled":
					await(t, h, bo.ID, "in_progress")
					mustCall(t, h, as(alice), llm.ObjectCall{Method: "POST", Path: "batches/" + bo.ID + "/cancel"}, nil)
					close(up.hold)
					c := await(t, h, bo.ID, "cancelled")
					want = int64(200 + 100*(len(results(t, h, c.OutputFileID))+linesRun(t, h, c.ErrorFileID)))
				case "failed":
					await(t, h, bo.ID, "failed")
					want = 200
				default:
					await(t, h, bo.ID, "completed")
				}
				if got := spentHeld(t, b); got != want {
					t.Errorf("alice's day holds %d nano-USD once the batch %s, want %d: what its lines cost, the hold released", got, end, want)
				}
			})
		})
	}
}

// linesRun is how many lines of an error file ran (a 4xx answer, not a line the batch
// never ran); none for no file.
func linesRun(t *testing.T, h llm.ObjectHost, id string) int {
	if id == "" {
		return 0
	}
	n := 0
	for _, l := range results(t, h, id) {
		if l["response"] != nil {
			n++
		}
	}
	return n
}
