package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// clock is a settable clock for Stats.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestStatsQuantiles(t *testing.T) {
	c := &clock{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	st := NewStats(15*time.Minute, c.now)
	for i := 1; i <= 100; i++ {
		st.Record("default", "sim/echo", Sample{Duration: time.Duration(i) * 10 * time.Millisecond,
			TTFT: time.Duration(i) * time.Millisecond, Error: i%10 == 0, Fallbacks: i % 2})
	}
	rep := Merge(c.t, 15, []Snapshot{st.Snapshot("a")})
	if len(rep.Data) != 1 || rep.Replicas != 1 {
		t.Fatalf("got %+v, want one row from one replica", rep)
	}
	r := rep.Data[0]
	if r.Requests != 100 || r.Errors != 10 || r.Fallbacks != 50 || r.Duration.Count != 100 || r.TTFT.Count != 100 {
		t.Errorf("got %+v, want 100 requests, 10 errors, 50 fallbacks", r)
	}
	// Buckets grow by √2: a quantile is within that factor of the truth.
	for _, tt := range []struct {
		name      string
		got, want float64
	}{
		{"duration p50", r.Duration.P50, 500}, {"duration p95", r.Duration.P95, 950}, {"duration p99", r.Duration.P99, 990},
		{"ttft p50", r.TTFT.P50, 50}, {"ttft p99", r.TTFT.P99, 99},
	} {
		if tt.got < tt.want/math.Sqrt2 || tt.got > tt.want*math.Sqrt2 {
			t.Errorf("%s: got %v ms, want about %v", tt.name, tt.got, tt.want)
		}
	}
}

// Minutes leave the window as time passes; a slot is reused for a later minute.
func TestStatsWindow(t *testing.T) {
	c := &clock{time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)}
	st := NewStats(5*time.Minute, c.now)
	st.Record("a", "t", Sample{Duration: time.Second})
	c.t = c.t.Add(3 * time.Minute)
	st.Record("a", "t", Sample{Duration: time.Second})
	tests := []struct {
		minutes int
		want    int64
	}{{1, 1}, {3, 1}, {4, 2}, {5, 2}}
	for _, tt := range tests {
		rep := Merge(c.t, tt.minutes, []Snapshot{st.Snapshot("r")})
		if got := rep.Data[0].Requests; got != tt.want {
			t.Errorf("last %d minutes: got %d requests, want %d", tt.minutes, got, tt.want)
		}
	}
	c.t = c.t.Add(6 * time.Minute) // the ring turns: both minutes are stale
	st.Record("a", "t", Sample{Duration: time.Second})
	if rep := Merge(c.t, 5, []Snapshot{st.Snapshot("r")}); rep.Data[0].Requests != 1 {
		t.Errorf("got %+v, want only the new minute", rep.Data[0])
	}
}

// Two replicas' snapshots, through JSON as Redis carries them, merge into what one replica
// would have counted; a snapshot older than the window is left out.
func TestStatsMergeReplicas(t *testing.T) {
	c := &clock{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	a, b, both := NewStats(15*time.Minute, c.now), NewStats(15*time.Minute, c.now), NewStats(15*time.Minute, c.now)
	for i := range 40 {
		s := Sample{Duration: time.Duration(i*i) * time.Millisecond, TTFT: time.Duration(i) * time.Millisecond, Error: i%7 == 0}
		if i%3 == 0 {
			a.Record("default", "x/y", s)
		} else {
			b.Record("default", "x/y", s)
		}
		both.Record("default", "x/y", s)
	}
	roundTrip := func(s Snapshot) Snapshot {
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var out Snapshot
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	stale := roundTrip(b.Snapshot("gone"))
	stale.At = c.t.Add(-time.Hour).UnixMilli()
	got := Merge(c.t, 15, []Snapshot{a.Snapshot("a"), roundTrip(b.Snapshot("b")), stale})
	want := Merge(c.t, 15, []Snapshot{both.Snapshot("one")})
	if got.Replicas != 2 {
		t.Errorf("got %d replicas, want 2 (the stale one left out)", got.Replicas)
	}
	g, w := got.Data[0], want.Data[0]
	if g != w {
		t.Errorf("got %+v, want %+v", g, w)
	}
}

// memStats is a StatsStore in memory.
type memStats struct{ snaps map[string][]byte }

func (m *memStats) PublishStats(_ context.Context, replica string, b []byte, _ time.Duration) error {
	m.snaps[replica] = b
	return nil
}

func (m *memStats) FleetStats(context.Context, time.Duration) ([][]byte, error) {
	var out [][]byte
	for _, b := range m.snaps {
		out = append(out, b)
	}
	return out, nil
}

// TestObserverReport: minutes is checked against the window; a shared statistics store
// makes the report the fleet's, anything else this replica's.
func TestObserverReport(t *testing.T) {
	ctx := t.Context()
	ob := NewObserver(Options{Window: 5 * time.Minute}, nil)
	defer ob.Close()
	for _, bad := range []string{"0", "6", "x", "-1"} {
		if _, err := ob.Report(ctx, bad); llm.KindOf(err) != llm.Invalid {
			t.Errorf("minutes=%s: %v, want Invalid", bad, err)
		}
	}
	if r, err := ob.Report(ctx, ""); err != nil || r.Partial {
		t.Fatalf("whole window: %+v, %v", r, err)
	}
	store := &memStats{snaps: map[string][]byte{}}
	other := NewObserver(Options{Window: 5 * time.Minute}, store)
	defer other.Close()
	other.Stats().Record("chat", "sim/echo", Sample{Duration: time.Millisecond})
	other.Publish()
	fleet := NewObserver(Options{Window: 5 * time.Minute}, store)
	defer fleet.Close()
	r, err := fleet.Report(ctx, "5")
	if err != nil || len(store.snaps) != 1 || !strings.Contains(fmt.Sprint(r), "chat") {
		t.Errorf("fleet report %+v, %v: want the other replica's chat", r, err)
	}
	if r, _ := ob.Report(ctx, "5"); strings.Contains(fmt.Sprint(r), "chat") {
		t.Error("a replica without the store sees the fleet")
	}
}

// TestStatsCache: the cache's results are counted per alias in the window and add up
// across replicas; an alias that does not cache has no row.
func TestStatsCache(t *testing.T) {
	c := &clock{time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	a, b := NewStats(15*time.Minute, c.now), NewStats(15*time.Minute, c.now)
	for _, r := range []string{"hit", "hit", "miss", "bypass"} {
		a.Record("faq", "mock/x", Sample{Cache: r})
	}
	b.Record("faq", "mock/x", Sample{Cache: "coalesced"})
	b.Record("faq", "mock/y", Sample{Cache: "hit"})
	b.Record("chat", "mock/x", Sample{})
	raw, _ := json.Marshal(b.Snapshot("b"))
	var sb Snapshot
	if err := json.Unmarshal(raw, &sb); err != nil {
		t.Fatal(err)
	}
	rep := Merge(c.t, 15, []Snapshot{a.Snapshot("a"), sb})
	want := []CacheRow{{Alias: "faq", Hits: 3, Coalesced: 1, Misses: 1, Bypassed: 1, HitRatio: 0.8}}
	if !reflect.DeepEqual(rep.Cache, want) {
		t.Fatalf("cache rows %+v, want %+v", rep.Cache, want)
	}
	c.t = c.t.Add(20 * time.Minute) // out of the window
	if rep := Merge(c.t, 15, []Snapshot{a.Snapshot("a")}); rep.Cache != nil {
		t.Errorf("after the window: %+v", rep.Cache)
	}
}
