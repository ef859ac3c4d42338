package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
	"github.com/sluice-gw/sluice/internal/usage"
)

// A record whose write landed and that the spool writes again (its answer was lost) counts
// once: the same write, by its id, whatever the order of the two.
func TestDrainReplayCountsOnce(t *testing.T) {
	srv := redistest.Start(t)
	s, err := New(Options{URL: srv.URL, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	u := s.Usage()
	if err := u.Add(ctx, "2026-06-01", usage.Labels{Key: "k"}, usage.Counts{Requests: 1, InputTokens: 5}); err != nil {
		t.Fatal(err)
	}
	w := write{script: addUsageScript, keys: []string{usageKey("2026-06-01"), usageKey("2026-06-01") + ":r:" + newID()},
		args: []any{int64(usage.Retention / time.Second), recordTTL, "k" + sep + sep + sep + "requests", int64(1)}}
	if err := s.run(ctx, w); err != nil { // landed; the caller saw a timeout
		t.Fatal(err)
	}
	for range 2 {
		s.spool.push(w)
	}
	if !s.drain(ctx) || s.spool.len() != 0 {
		t.Fatalf("got %d left after the drain, want none", s.spool.len())
	}
	var got usage.Counts
	err = u.Rows(ctx, []string{"2026-06-01"}, func(_ string, r usage.Row) { got.Add(r.Counts) })
	if err != nil || got != (usage.Counts{Requests: 2, InputTokens: 5}) {
		t.Errorf("got %+v %v, want 2 requests: the replayed record once", got, err)
	}
}
