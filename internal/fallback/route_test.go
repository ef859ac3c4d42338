package fallback_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
)

// clock is a fake clock for a Meter: it moves only when the test says.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// A slower sample takes the peak EWMA at once; faster ones pull it down with the decay;
// without samples it fades with the decay (e^-1 in 30 s); the p95 is the window's.
func TestMeterPeakEWMA(t *testing.T) {
	c := newClock()
	m := &fallback.Meter{Now: c.Now}
	if v := m.View("p/a"); v.Latency != 0 || v.Weight != 1 || v.Fresh {
		t.Fatalf("unknown target: got %+v, want zeros, weight 1, not fresh", v)
	}
	m.Latency("p/a", 10*time.Millisecond)
	m.Latency("p/a", 300*time.Millisecond)
	if v := m.View("p/a"); v.Latency != 300*time.Millisecond || v.P95 != 300*time.Millisecond || !v.Fresh {
		t.Fatalf("after a slow sample: got %+v, want latency and p95 300ms, fresh", v)
	}
	c.add(30 * time.Second)
	if v := m.View("p/a"); v.Latency < 110*time.Millisecond || v.Latency > 111*time.Millisecond || v.Fresh || v.P95 != 0 {
		t.Errorf("30 s without sample: got %+v, want 300ms/e = 110ms, not fresh, no p95", v)
	}
	for range 10 {
		c.add(3 * time.Second)
		m.Latency("p/a", 10*time.Millisecond)
	}
	if v := m.View("p/a"); v.Latency > 50*time.Millisecond || v.P95 != 10*time.Millisecond {
		t.Errorf("after 30 s of fast samples: got %+v, want latency under 50ms and p95 10ms", v)
	}
}

// The adaptive weight falls with the recent error rate (counted as if 5 were seen) and
// comes back as the target succeeds; in flight counts Begin to End.
func TestMeterAdaptiveWeight(t *testing.T) {
	c := newClock()
	m := &fallback.Meter{Now: c.Now}
	m.Begin("p/a")
	m.End("p/a", fallback.Failed)
	if v := m.View("p/a"); v.ErrorRate != 0.2 || v.Weight < 0.19 || v.Weight > 0.21 || v.InFlight != 0 {
		t.Errorf("one failure: got %+v, want error rate 1/5, weight 0.2, none in flight", v)
	}
	for i := range 20 {
		m.Begin("p/a")
		v := fallback.Succeeded
		if i%10 < 3 {
			v = fallback.Failed
		}
		m.End("p/a", v)
	}
	if v := m.View("p/a"); v.Weight != fallback.MinWeight {
		t.Errorf("failing about 30%%: got weight %v, want the floor %v", v.Weight, fallback.MinWeight)
	}
	for range 60 {
		c.add(time.Second)
		m.Begin("p/a")
		m.End("p/a", fallback.Succeeded)
	}
	if v := m.View("p/a"); v.Weight < 0.8 {
		t.Errorf("a minute of successes: got weight %v, want at least 0.8", v.Weight)
	}
	m.Begin("p/a")
	m.Begin("p/a")
	m.End("p/a", fallback.Neutral)
	if v := m.View("p/a"); v.InFlight != 1 {
		t.Errorf("two begun, one ended: got %d in flight, want 1", v.InFlight)
	}
}

// routeChain is a chain whose one group of p/a and p/b picks by route, with a meter on a
// frozen clock (the chain's own samples, microseconds, then move no EWMA) and seeded draws.
func routeChain(route fallback.Route) (*fallback.Chain, *fallback.Meter, *clock) {
	c := newClock()
	m := &fallback.Meter{Now: c.Now}
	r := rand.New(rand.NewPCG(1, 2))
	var mu sync.Mutex
	ch := &fallback.Chain{Alias: "pool", Load: m, Health: &fallback.Memory{}, Rand: func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return r.Float64()
	}, Elements: []fallback.Element{{Route: route, MaxTTFT: 150 * time.Millisecond, Targets: []fallback.Target{
		{Name: "p/a", Model: "a", Provider: newFake(ok), Price: 3},
		{Name: "p/b", Model: "b", Provider: newFake(ok), Price: 30},
	}}}}
	return ch, m, c
}

// count runs n requests on ch and counts the targets that served.
func count(t *testing.T, ch *fallback.Chain, n int, rq func() *llm.Request) map[string]int {
	t.Helper()
	got := map[string]int{}
	for range n {
		s, err := ch.Start(rq()).Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got[s.Target]++
		if _, err := readAll(t, s); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	return got
}

func TestRoutes(t *testing.T) {
	t.Run("latency picks the faster", func(t *testing.T) {
		ch, m, _ := routeChain(fallback.RouteLatency)
		m.Latency("p/a", 300*time.Millisecond)
		m.Latency("p/b", 20*time.Millisecond)
		if got := count(t, ch, 100, req); got["p/b"] != 100 {
			t.Errorf("got %v, want p/b for all 100", got)
		}
	})
	t.Run("latency counts in flight", func(t *testing.T) {
		ch, m, _ := routeChain(fallback.RouteLatency)
		m.Latency("p/a", 20*time.Millisecond)
		m.Latency("p/b", 50*time.Millisecond)
		for range 3 { // p/a: 20 ms × 4 > p/b: 50 ms × 1
			m.Begin("p/a")
		}
		if got := count(t, ch, 50, req); got["p/b"] != 50 {
			t.Errorf("got %v, want p/b for all 50", got)
		}
	})
	t.Run("latency probes a target with no recent sample", func(t *testing.T) {
		ch, m, c := routeChain(fallback.RouteLatency)
		m.Latency("p/a", 300*time.Millisecond)
		c.add(fallback.ProbeAfter + time.Second)
		m.Latency("p/b", 20*time.Millisecond)
		// A probe's sample makes p/a fresh again, and its 300 ms peak (the clock is frozen)
		// keeps it out after: one probe, or a few if they come close together.
		got := count(t, ch, 400, req)
		if got["p/a"] < 1 || got["p/a"] > 5 {
			t.Errorf("got %v, want p/a probed once or a few times", got)
		}
	})
	t.Run("least_busy", func(t *testing.T) {
		ch, m, _ := routeChain(fallback.RouteLeastBusy)
		m.Begin("p/a")
		if got := count(t, ch, 50, req); got["p/b"] != 50 {
			t.Errorf("p/a busy: got %v, want p/b for all 50", got)
		}
		m.End("p/a", fallback.Neutral)
		if got := count(t, ch, 100, req); got["p/a"] < 25 || got["p/b"] < 25 {
			t.Errorf("both idle: got %v, want both (ties drawn)", got)
		}
	})
	t.Run("cost", func(t *testing.T) {
		ch, m, _ := routeChain(fallback.RouteCost)
		m.Latency("p/a", 100*time.Millisecond)
		m.Latency("p/b", 20*time.Millisecond)
		if got := count(t, ch, 50, req); got["p/a"] != 50 {
			t.Errorf("p/a cheaper and within max_ttft: got %v, want p/a for all 50", got)
		}
		for range 5 { // over the p95 of the last 32 samples, the chain's own included
			m.Latency("p/a", 200*time.Millisecond)
		}
		if got := count(t, ch, 50, req); got["p/b"] != 50 {
			t.Errorf("p/a's p95 over max_ttft: got %v, want p/b for all 50", got)
		}
		for range 5 {
			m.Latency("p/b", 400*time.Millisecond)
		}
		if got := count(t, ch, 50, req); got["p/a"] != 50 {
			t.Errorf("both over max_ttft: got %v, want the faster, p/a, for all 50", got)
		}
	})
	t.Run("weighted scales by adaptive weight", func(t *testing.T) {
		ch, m, _ := routeChain(fallback.RouteWeighted)
		for range 20 {
			m.Begin("p/a")
			m.End("p/a", fallback.Failed)
		}
		// p/a's weight is the floor, and its successes here lift it only slowly.
		if got := count(t, ch, 100, req); got["p/a"] > 15 {
			t.Errorf("p/a failing: got %v, want it under 15 of 100", got)
		}
	})
}

// Affinity keeps a conversation on its member whatever the route: a slower member that
// holds a conversation keeps it.
func TestRouteKeepsAffinity(t *testing.T) {
	ch, m, _ := routeChain(fallback.RouteLatency)
	ch.Affinity = &fallback.AffinityMemory{}
	rq := func() *llm.Request { r := req(); r.Session = "conv-1"; return r }
	first := count(t, ch, 1, rq)
	var held string
	for k := range first {
		held = k
	}
	m.Latency(held, 2*time.Second) // the held member is now by far the slower
	if got := count(t, ch, 20, rq); got[held] != 20 {
		t.Errorf("conversation on %s: got %v, want it kept for all 20", held, got)
	}
}

// sampleMemory is a SampleStore in this process, for replicas in one test.
type sampleMemory struct {
	mu sync.Mutex
	m  map[string]map[string][]byte
}

func (s *sampleMemory) Exchange(_ context.Context, replica string, mine map[string][]byte, _ time.Duration) (map[string]map[string][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]map[string][]byte{}
	}
	out := map[string]map[string][]byte{}
	for alias, b := range mine {
		if s.m[alias] == nil {
			s.m[alias] = map[string][]byte{}
		}
		s.m[alias][replica] = b
		for r, d := range s.m[alias] {
			if r != replica {
				if out[alias] == nil {
					out[alias] = map[string][]byte{}
				}
				out[alias][r] = d
			}
		}
	}
	return out, nil
}

// Three replicas: what one learned reaches the others at their next exchange, in flight
// added up; a target in two aliases counts once per replica. Start and Close own the
// exchanging goroutine (goleak checks it ends).
func TestShare(t *testing.T) {
	store := &sampleMemory{}
	aliases := map[string][]string{"pool": {"p/a", "p/b"}, "other": {"p/a"}}
	var meters []*fallback.Meter
	var shares []*fallback.Share
	for i := range 3 {
		m := &fallback.Meter{}
		meters = append(meters, m)
		shares = append(shares, &fallback.Share{Meter: m, Store: store, Replica: string(rune('1' + i)), Aliases: aliases})
	}
	meters[0].Latency("p/a", 300*time.Millisecond)
	meters[0].Begin("p/a")
	meters[1].Begin("p/a")
	ctx := context.Background()
	for _, s := range shares {
		if err := s.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range shares { // the first ones' exchange came before the later ones wrote
		s.Tick(ctx)
	}
	v := meters[2].View("p/a")
	if v.Latency < 290*time.Millisecond || v.InFlight != 2 || !v.Fresh {
		t.Errorf("replica 3's view of p/a: got %+v, want about 300ms, 2 in flight, fresh", v)
	}
	if v := meters[0].View("p/a"); v.InFlight != 2 {
		t.Errorf("replica 1's view: got %d in flight, want 2 (its own and replica 2's)", v.InFlight)
	}
	var ds map[string]fallback.Digest
	if err := json.Unmarshal(store.m["pool"]["1"], &ds); err != nil || ds["p/a"].InFlight != 1 {
		t.Errorf("replica 1's record: got %v, %v; want its own p/a, 1 in flight", ds, err)
	}
	shares[0].Every = time.Millisecond
	shares[0].Start()
	shares[0].Close()
	shares[0].Close()
}
