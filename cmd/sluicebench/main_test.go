package main

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestQuickInProcess runs the non-streamed and streamed scenarios at a tiny rate against
// servers in this process: the report has the rows and real latencies.
func TestQuickInProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := measure(ctx, options{duration: 400 * time.Millisecond, scenarios: []string{"nonstream", "stream"},
		inproc: true, rateScale: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(rep.rows), 8; got != want {
		t.Fatalf("got %d rows, want %d", got, want)
	}
	for _, r := range rep.rows {
		if r.pv <= 0 || r.gv <= 0 {
			t.Errorf("%s %s: got proxy %v, gateway %v, want both > 0", r.scenario, r.metric, r.pv, r.gv)
		}
	}
	if rep.failed {
		t.Errorf("got failed requests: %q", rep.notes)
	}
	var b strings.Builder
	rep.write(&b)
	if !strings.Contains(b.String(), "| non-streamed 25/s | p50 |") {
		t.Errorf("got report\n%s\nwant a non-streamed 25/s p50 row", b.String())
	}
}

func TestMemoryNeedsChildren(t *testing.T) {
	_, err := measure(context.Background(), options{duration: time.Second, scenarios: []string{"memory"},
		streams: 1, inproc: true})
	if err == nil || !strings.Contains(err.Error(), "child processes") {
		t.Errorf("got %v, want an error saying memory needs child processes", err)
	}
}

// TestMemoryRefusesUpstreamAlias: with SLUICE_BENCH_UPSTREAM every text script is answered
// by the default one, whose streams end at once, so the memory scenario is refused.
func TestMemoryRefusesUpstreamAlias(t *testing.T) {
	t.Setenv("SLUICE_BENCH_UPSTREAM", "plain")
	_, err := measure(context.Background(), options{duration: time.Second, scenarios: []string{"nonstream", "memory"},
		streams: 1})
	if err == nil || !strings.Contains(err.Error(), "leave the memory scenario out") {
		t.Errorf("got %v, want the memory scenario refused", err)
	}
}

func TestUnknownScenario(t *testing.T) {
	if _, err := measure(context.Background(), options{duration: time.Second, scenarios: []string{"nope"}}); err == nil {
		t.Error("got nil, want an error for an unknown scenario")
	}
}

// TestRedisHungInProcess runs the redis-hung scenario at a tiny rate: four rows, every
// request served (on_failure: open) with Redis answering and with it stopped.
func TestRedisHungInProcess(t *testing.T) {
	redistest.Binary(t) // the scenario starts its own
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := measure(ctx, options{duration: 400 * time.Millisecond, scenarios: []string{"redis-hung"},
		inproc: true, rateScale: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(rep.rows), 4; got != want {
		t.Fatalf("got %d rows (notes %q), want %d", got, rep.notes, want)
	}
	for _, r := range rep.rows {
		if r.pv <= 0 || r.gv <= 0 {
			t.Errorf("%s %s: got proxy %v, gateway %v, want both > 0", r.scenario, r.metric, r.pv, r.gv)
		}
	}
	if rep.failed {
		t.Errorf("got failed requests: %q", rep.notes)
	}
}

// TestLongAndCeilingInProcess runs the 500-token and the ceiling scenarios at tiny rates in
// process: the long rows have real latencies, and each ceiling row names a rate of the
// climb (or 0, a server that broke at the first).
func TestLongAndCeilingInProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := measure(ctx, options{duration: 400 * time.Millisecond, scenarios: []string{"long", "ceiling"},
		inproc: true, rateScale: 0.1, ceilingN: 20})
	if err != nil {
		t.Fatal(err)
	}
	long, ceil := 0, 0
	for _, r := range rep.rows {
		switch {
		case strings.HasPrefix(r.scenario, "500-token answer"):
			long++
			if r.pv <= 0 || r.gv <= 0 {
				t.Errorf("%s %s: got proxy %v, gateway %v, want both > 0", r.scenario, r.metric, r.pv, r.gv)
			}
		case strings.HasPrefix(r.metric, "highest rate"):
			ceil++
			for _, v := range []float64{r.pv, r.gv} {
				if v != 0 && !slices.Contains(ceilingRates, math.Round(v*10)) {
					t.Errorf("%s: got %v, want 0 or a rate of the climb scaled by 0.1", r.scenario, v)
				}
			}
		}
	}
	if long != 5 || ceil != 2 {
		t.Errorf("got %d rows of the long scenario and %d ceiling rows, want 5 and 2", long, ceil)
	}
}
