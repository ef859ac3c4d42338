package fallback_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
)

// fakeAffinity is an Affinity in a map that counts its calls and can fail. claims counts
// the Gets that found nothing and remembered the pick (no extra call).
type fakeAffinity struct {
	mu                 sync.Mutex
	m                  map[string]string
	gets, sets, claims int
	ttls               []time.Duration
	down               bool
}

func (f *fakeAffinity) Get(_ context.Context, key, pick string, ttl time.Duration) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	f.ttls = append(f.ttls, ttl)
	if f.down {
		return "", errors.New("store down")
	}
	v := f.m[key]
	if v == "" && pick != "" {
		if f.m == nil {
			f.m = map[string]string{}
		}
		f.m[key] = pick
		f.claims++
	}
	return v, nil
}

func (f *fakeAffinity) Set(_ context.Context, key, target string, ttl time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sets++
	f.ttls = append(f.ttls, ttl)
	if f.down {
		return errors.New("store down")
	}
	if f.m == nil {
		f.m = map[string]string{}
	}
	f.m[key] = target
	return nil
}

func session(id string) *llm.Request {
	r := req()
	r.Session = id
	return r
}

// serveOnce walks c for rq and returns the target and the affinity outcome.
func serveOnce(t *testing.T, c *fallback.Chain, rq *llm.Request) (string, string) {
	t.Helper()
	run := c.Start(rq)
	s, err := run.Next(context.Background())
	if err != nil {
		t.Fatalf("got %v, want an answer", err)
	}
	defer s.Close()
	readAll(t, s)
	return s.Target, run.Affinity
}

// A conversation's first turn is placed by weight and remembered (new); its next turns go
// to the same member (kept) with no write; when that member cools down the next turn moves
// (moved, written) and the conversation stays on its new member once the first is back.
func TestAffinityKeptNewMoved(t *testing.T) {
	now := time.Unix(1000, 0)
	h := &fallback.Memory{Now: func() time.Time { return now }}
	aff := &fakeAffinity{}
	c := &fallback.Chain{Alias: "a", Health: h, Affinity: aff, Elements: []fallback.Element{
		{Targets: []fallback.Target{target("p/x", newFake(ok)), target("p/y", newFake(ok))}}}}
	first, out := serveOnce(t, c, session("conv-1"))
	// The first turn's read remembered the member it picked: no write of its own.
	if out != fallback.AffinityNew || aff.sets != 0 || aff.claims != 1 || aff.m == nil {
		t.Fatalf("first turn: got %q with %d writes and %d claims, want new with 0 and 1", out, aff.sets, aff.claims)
	}
	other := map[string]string{"p/x": "p/y", "p/y": "p/x"}[first]
	for i := range 5 {
		if got, out := serveOnce(t, c, session("conv-1")); got != first || out != fallback.AffinityKept {
			t.Fatalf("turn %d: got %s %q, want %s kept", i+2, got, out, first)
		}
	}
	if aff.sets != 0 || aff.gets != 6 || aff.claims != 1 {
		t.Errorf("after 6 turns: got %d writes, %d reads and %d claims, want 0, 6 and 1", aff.sets, aff.gets, aff.claims)
	}
	for _, ttl := range aff.ttls {
		if ttl != fallback.AffinityTTL {
			t.Errorf("got ttl %v, want %v", ttl, fallback.AffinityTTL)
		}
	}
	h.Failure(context.Background(), first, time.Minute) // a Retry-After: cooling at once
	if got, out := serveOnce(t, c, session("conv-1")); got != other || out != fallback.AffinityMoved || aff.sets != 1 {
		t.Fatalf("first cooling: got %s %q with %d writes, want %s moved with 1", got, out, aff.sets, other)
	}
	now = now.Add(2 * time.Minute) // its cooldown is over
	h.Success(context.Background(), first)
	for i := range 3 {
		if got, out := serveOnce(t, c, session("conv-1")); got != other || out != fallback.AffinityKept {
			t.Fatalf("turn %d after the move: got %s %q, want %s kept", i, got, out, other)
		}
	}
	if aff.sets != 1 {
		t.Errorf("got %d writes, want 1: a kept turn writes nothing", aff.sets)
	}
}

// Distinct conversations spread by weight; each stays on its member, whichever replica
// (chain) it reaches, even with no shared entry (the placement is the conversation's hash).
func TestAffinitySpreadsByWeight(t *testing.T) {
	x, y := newFake(ok), newFake(ok)
	el := []fallback.Element{{Targets: []fallback.Target{target("p/x", x), target("p/y", y)}, Weights: []int{3, 1}}}
	one := &fallback.Chain{Alias: "a", Affinity: &fakeAffinity{}, Elements: el}
	two := &fallback.Chain{Alias: "a", Affinity: &fakeAffinity{}, Elements: el}
	const n = 2000
	for i := range n {
		id := fmt.Sprintf("conv-%d", i)
		a, _ := serveOnce(t, one, session(id))
		if b, out := serveOnce(t, two, session(id)); b != a || out != fallback.AffinityNew {
			t.Fatalf("%s: got %s then %s %q on another replica, want the same member, new", id, a, b, out)
		}
	}
	if got := float64(x.Calls()) / (2 * n); got < 0.72 || got > 0.78 {
		t.Errorf("got share %.3f on the weight-3 member, want 0.75±0.03", got)
	}
}

// Without a session, the conversation is the request's cacheable prefix: the later turns of
// one conversation share the first's entry, another conversation has its own, and another
// alias keeps its own entries.
func TestAffinityPrefixKey(t *testing.T) {
	aff := &fakeAffinity{}
	el := []fallback.Element{{Targets: []fallback.Target{target("p/x", newFake(ok)), target("p/y", newFake(ok))}}}
	c := &fallback.Chain{Alias: "a", Affinity: aff, Elements: el}
	turn := func(system, first string, later int) *llm.Request {
		r := &llm.Request{Messages: []llm.Message{
			{Role: llm.RoleSystem, Parts: []llm.Part{{Type: llm.PartText, Text: system}}},
			{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: first}}}}}
		for i := range later {
			r.Messages = append(r.Messages,
				llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartText, Text: fmt.Sprint("answer ", i)}}},
				llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: fmt.Sprint("more ", i)}}})
		}
		return r
	}
	serveOnce(t, c, turn("You code.", "Fix the bug.", 0))
	for i := 1; i < 4; i++ {
		if _, out := serveOnce(t, c, turn("You code.", "Fix the bug.", i)); out != fallback.AffinityKept {
			t.Errorf("turn %d: got %q, want kept", i+1, out)
		}
	}
	if _, out := serveOnce(t, c, turn("You code.", "Write a test.", 1)); out != fallback.AffinityNew {
		t.Errorf("another conversation: got %q, want new", out)
	}
	d := &fallback.Chain{Alias: "b", Affinity: aff, Elements: el}
	if _, out := serveOnce(t, d, turn("You code.", "Fix the bug.", 2)); out != fallback.AffinityNew {
		t.Errorf("another alias: got %q, want new", out)
	}
	if len(aff.m) != 3 {
		t.Errorf("got %d entries, want 3", len(aff.m))
	}
}

// A member that fails before commit falls back to the next element (the rule of groups),
// and the record says the conversation moved; a store that fails costs nothing but the
// affinity: the request is served by weight and nothing is written.
func TestAffinityFailures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		down   bool
		failX  bool
		want   string // target of the second turn
		out    string
		writes int
	}{
		{name: "member fails, next element serves", failX: true, want: "p/b", out: fallback.AffinityMoved, writes: 0},
		{name: "store down", down: true, want: "p/x", out: fallback.AffinityNew, writes: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newFake(ok)
			if tc.failX {
				x = newFake(ok, script{open: err500})
			}
			aff := &fakeAffinity{}
			c := &fallback.Chain{Alias: "a", Affinity: aff, Elements: []fallback.Element{
				{Targets: []fallback.Target{target("p/x", x), target("p/y", newFake(ok))}},
				{Targets: []fallback.Target{target("p/b", newFake(ok))}}}}
			// A conversation whose member is p/x: the placement depends on the alias, the
			// element and the conversation only.
			probe := &fallback.Chain{Alias: "a", Affinity: &fakeAffinity{}, Elements: []fallback.Element{
				{Targets: []fallback.Target{target("p/x", newFake(ok)), target("p/y", newFake(ok))}}}}
			id := ""
			for i := 0; id == ""; i++ {
				if got, _ := serveOnce(t, probe, session(fmt.Sprint("c", i))); got == "p/x" {
					id = fmt.Sprint("c", i)
				}
			}
			if got, _ := serveOnce(t, c, session(id)); got != "p/x" {
				t.Fatalf("first turn: got %s, want p/x", got)
			}
			aff.down = tc.down
			got, out := serveOnce(t, c, session(id))
			if got != tc.want || out != tc.out {
				t.Errorf("second turn: got %s %q, want %s %q", got, out, tc.want, tc.out)
			}
			if aff.sets != tc.writes || aff.claims != 1 {
				t.Errorf("got %d writes and %d claims, want %d and 1 (the first turn's): none after a failed read", aff.sets, aff.claims, tc.writes)
			}
		})
	}
}

// A single target and a chain without affinity neither read nor write, and say nothing.
func TestAffinityOnlyForGroups(t *testing.T) {
	aff := &fakeAffinity{}
	c := &fallback.Chain{Alias: "a", Affinity: aff, Targets: []fallback.Target{target("p/x", newFake(ok))}}
	if _, out := serveOnce(t, c, session("s")); out != "" || aff.gets+aff.sets != 0 {
		t.Errorf("single target: got %q with %d calls of the store, want none", out, aff.gets+aff.sets)
	}
	d := &fallback.Chain{Alias: "a", Elements: []fallback.Element{
		{Targets: []fallback.Target{target("p/x", newFake(ok)), target("p/y", newFake(ok))}}}}
	if _, out := serveOnce(t, d, session("s")); out != "" {
		t.Errorf("no affinity: got %q, want none", out)
	}
}

// The memory store: a read refreshes an entry's life, an entry past it is gone, and past
// MaxEntries the least recently used goes first.
func TestAffinityMemory(t *testing.T) {
	now := time.Unix(1000, 0)
	m := &fallback.AffinityMemory{MaxEntries: 2, Now: func() time.Time { return now }}
	ctx := context.Background()
	get := func(k string) string { v, _ := m.Get(ctx, k, "", time.Minute); return v }
	_ = m.Set(ctx, "a", "p/x", time.Minute)
	now = now.Add(50 * time.Second)
	if got := get("a"); got != "p/x" {
		t.Fatalf("got %q, want p/x", got)
	}
	now = now.Add(50 * time.Second) // 100 s after the write, 50 s after the read
	if got := get("a"); got != "p/x" {
		t.Errorf("after a refresh: got %q, want p/x", got)
	}
	_ = m.Set(ctx, "b", "p/y", time.Minute)
	get("a") // a is now the most recently used
	_ = m.Set(ctx, "c", "p/z", time.Minute)
	if got, n := get("b"), m.Len(); got != "" || n != 2 {
		t.Errorf("over the bound: got b=%q and %d entries, want b evicted and 2", got, n)
	}
	if get("a") != "p/x" || get("c") != "p/z" {
		t.Errorf("got a=%q c=%q, want both kept", get("a"), get("c"))
	}
	now = now.Add(time.Minute)
	if got, n := get("a"), m.Len(); got != "" || n != 1 {
		t.Errorf("expired: got %q and %d entries, want none and 1", got, n)
	}
}

// The memory store under concurrent use (run with -race).
func TestAffinityMemoryConcurrent(t *testing.T) {
	m := &fallback.AffinityMemory{MaxEntries: 64}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				k := fmt.Sprint(g, ":", i%100)
				if v, _ := m.Get(context.Background(), k, "", time.Minute); v == "" {
					_ = m.Set(context.Background(), k, "p/x", time.Minute)
				}
			}
		}()
	}
	wg.Wait()
	if n := m.Len(); n > 64 {
		t.Errorf("got %d entries, want at most 64", n)
	}
}

// recorder is a Provider that keeps the requests it was sent.
type recorder struct {
	mu   sync.Mutex
	reqs []*llm.Request
}

func (r *recorder) Stream(ctx context.Context, rq *llm.Request) (llm.Stream, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, rq)
	r.mu.Unlock()
	return newFake(ok).Stream(ctx, rq)
}

// prompt_cache: auto marks the system prompt, the last tool and the last user turn of a
// request that came without markers, on what the provider is sent only; a client's own
// markers are left as they are; off, nothing is marked. A later round (Again) is marked too.
func TestAutoCache(t *testing.T) {
	mk := func(marked bool) *llm.Request {
		r := &llm.Request{Tools: []llm.Tool{{Name: "read"}, {Name: "write"}}, Messages: []llm.Message{
			{Role: llm.RoleSystem, Parts: []llm.Part{{Type: llm.PartText, Text: "You code."}}},
			{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "Fix it."}}}}}
		if marked {
			r.Messages[0].Parts[0].Cache = &llm.Cache{TTL: "1h"}
		}
		return r
	}
	for _, tc := range []struct {
		name   string
		auto   bool
		marked bool
		want   int // marks the provider sees
	}{
		{name: "auto", auto: true, want: 3},
		{name: "auto, client marked", auto: true, marked: true, want: 1},
		{name: "off", want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &recorder{}
			c := &fallback.Chain{Alias: "a", AutoCache: tc.auto, Targets: []fallback.Target{target("p/x", p)}}
			in := mk(tc.marked)
			run := c.Start(in)
			s, err := run.Next(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			readAll(t, s)
			next := mk(tc.marked)
			next.Messages = append(next.Messages, llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "And this."}}})
			s2, err := run.Again(context.Background(), s, next)
			if err != nil {
				t.Fatal(err)
			}
			readAll(t, s2)
			s.Close()
			s2.Close()
			for i, rq := range p.reqs {
				if got := len(rq.CacheMarks()); got != tc.want {
					t.Errorf("round %d: the provider got %d marks, want %d", i+1, got, tc.want)
				}
			}
			if tc.auto && !tc.marked {
				last := p.reqs[1].Messages[2]
				if last.Parts[0].Cache == nil {
					t.Errorf("round 2: the last user turn is not marked")
				}
				if got := len(in.CacheMarks()) + len(next.CacheMarks()); got != 0 {
					t.Errorf("the caller's requests got %d marks, want none", got)
				}
			}
		})
	}
}

// A new conversation whose weighted pick is cooling is served by the other member: the
// read had claimed the pick, so the member that served is written once; the next turn
// keeps it with no write.
func TestAffinityPickCooling(t *testing.T) {
	h := &fallback.Memory{}
	aff := &fakeAffinity{}
	c := &fallback.Chain{Alias: "a", Health: h, Affinity: aff, Elements: []fallback.Element{
		{Targets: []fallback.Target{target("p/x", newFake(ok)), target("p/y", newFake(ok))}}}}
	first, _ := serveOnce(t, c, session("conv-9")) // where conv-9 goes
	other := map[string]string{"p/x": "p/y", "p/y": "p/x"}[first]
	// A conversation placed on first by weight (the placement is the alias's, the
	// element's and the conversation's alone).
	id := ""
	for i := 0; id == ""; i++ {
		probe := &fallback.Chain{Alias: "a", Affinity: &fakeAffinity{}, Elements: c.Elements}
		if got, _ := serveOnce(t, probe, session(fmt.Sprint("c", i))); got == first {
			id = fmt.Sprint("c", i)
		}
	}
	h.Failure(context.Background(), first, time.Minute)
	got, out := serveOnce(t, c, session(id))
	if got != other || out != fallback.AffinityNew || aff.sets != 1 {
		t.Fatalf("got %s %q with %d writes, want %s new with 1", got, out, aff.sets, other)
	}
	if got, out := serveOnce(t, c, session(id)); got != other || out != fallback.AffinityKept || aff.sets != 1 {
		t.Errorf("next turn: got %s %q with %d writes, want %s kept with 1", got, out, aff.sets, other)
	}
}
