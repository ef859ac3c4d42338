package shadow

import (
	"context"
	"io"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"unicode"

	"go.uber.org/goleak"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/relay"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fake is a provider that answers words as text deltas with usage, fails with err, or, with
// block set, holds its stream before the first event until the call's context ends.
type fake struct {
	words   []string
	err     error
	block   bool
	started chan struct{} // closed by the first call, when not nil
	once    sync.Once
	mu      sync.Mutex
	got     []*llm.Request
}

func (f *fake) Stream(ctx context.Context, req *llm.Request) (llm.Stream, error) {
	f.mu.Lock()
	f.got = append(f.got, req)
	f.mu.Unlock()
	if f.started != nil {
		f.once.Do(func() { close(f.started) })
	}
	if f.err != nil {
		return nil, f.err
	}
	evs := []llm.Event{{Type: llm.EvStart, ID: "up_1", Model: req.Model}}
	for _, w := range f.words {
		evs = append(evs, llm.Event{Type: llm.EvText, Text: w})
	}
	evs = append(evs, llm.Event{Type: llm.EvDone, Finish: "stop"},
		llm.Event{Type: llm.EvUsage, Usage: &llm.Usage{PromptTokens: 10, CompletionTokens: len(f.words), TotalTokens: 10 + len(f.words)}})
	return &stream{ctx: ctx, evs: evs, block: f.block}, nil
}

type stream struct {
	ctx   context.Context
	evs   []llm.Event
	block bool
}

func (s *stream) Recv() (llm.Event, error) {
	if s.block {
		<-s.ctx.Done()
		return llm.Event{}, llm.ContextError(s.ctx)
	}
	if len(s.evs) == 0 {
		return llm.Event{}, io.EOF
	}
	ev := s.evs[0]
	s.evs = s.evs[1:]
	return ev, nil
}

func (s *stream) Close() error { return nil }

// collector keeps the records a Mirror hands over; got receives each as it comes.
type collector struct {
	mu   sync.Mutex
	recs []*telemetry.Access
	got  chan struct{}
}

func newCollector() *collector { return &collector{got: make(chan struct{}, 16)} }

func (c *collector) record(in *telemetry.Access) {
	c.mu.Lock()
	c.recs = append(c.recs, in)
	c.mu.Unlock()
	c.got <- struct{}{}
}

// served is the access record of a request of alias "pool" the real target answered with
// text.
func served(text string) *telemetry.Access {
	req := &llm.Request{Model: "real-model", Stream: true,
		Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "Hello"}}}}}
	return &telemetry.Access{ID: "req_1", Record: "rec_1", Method: "POST", Path: "/v1/chat/completions", Model: "pool",
		Alias: "pool", Target: "a/real-model", Status: 200, Stream: true, Wire: "chat", KeyID: "key_1", KeyName: "k", Team: "t",
		CostUSD: 0.5, Request: req, Response: &llm.Response{Choices: []llm.Choice{{Text: text}}}}
}

// one is the chain of the one target name, model m of p.
func one(name, m string, p llm.Provider) *fallback.Chain {
	return &fallback.Chain{Alias: "pool", Targets: []fallback.Target{{Name: name, Model: m, Provider: p}}}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// At 100%, every served request is asked again of the shadow target, with its model; the
// record is the shadow's own (shadow: true, its target, wire "shadow", no key nor team), with
// its usage, its cost from Cost, and its answer's similarity to the client's.
func TestObserveRecords(t *testing.T) {
	p := &fake{words: []string{"The", " sky", " is", " blue"}}
	c := newCollector()
	m := New(Options{Targets: map[string]Target{"pool": {Chain: one("b/shadow-model", "shadow-model", p), Percent: 100}},
		Record: c.record, Log: quiet(),
		Cost: func(target, model string, u llm.Usage) float64 { return float64(u.CompletionTokens) / 100 }})
	in := served("the sky is grey")
	m.Observe(in)
	<-c.got
	m.Close()
	if len(c.recs) != 1 {
		t.Fatalf("got %d records, want 1", len(c.recs))
	}
	r := c.recs[0]
	if !r.Shadow || r.Target != "b/shadow-model" || r.Wire != Wire || r.KeyID != "" || r.KeyName != "" || r.Team != "" {
		t.Errorf("got shadow %v, target %q, wire %q, key %q/%q, team %q; want true, b/shadow-model, shadow, no key nor team",
			r.Shadow, r.Target, r.Wire, r.KeyID, r.KeyName, r.Team)
	}
	if r.ID != "req_1" || r.Record == "" || r.Record == "rec_1" || r.Alias != "pool" || r.Status != 200 || r.Kind != llm.KindNone {
		t.Errorf("got id %q, record %q, alias %q, status %d, kind %v; want req_1, a record of its own, pool, 200, none",
			r.ID, r.Record, r.Alias, r.Status, r.Kind)
	}
	if want := 3.0 / 5; math.Abs(r.Similarity-want) > 1e-9 { // {the, sky, is} of {the, sky, is, blue, grey}
		t.Errorf("got similarity %v, want %v", r.Similarity, want)
	}
	if r.Usage == nil || r.Usage.Completion != 4 || r.CostUSD != 0.04 {
		t.Errorf("got usage %+v, cost %v; want 4 completion tokens costing 0.04", r.Usage, r.CostUSD)
	}
	if len(p.got) != 1 || p.got[0].Model != "shadow-model" || in.Request.Model != "real-model" {
		t.Errorf("the shadow was asked %d times, model %q; the client's request now names %q: want once, shadow-model, real-model",
			len(p.got), p.got[0].Model, in.Request.Model)
	}
	if in.Shadow || in.CostUSD != 0.5 || in.Target != "a/real-model" {
		t.Errorf("the client's record changed: %+v", in)
	}
}

// mask is a redaction window that masks each delta "sky" whole (the fake's deltas are words).
type mask struct{ n int }

func (w *mask) Write(piece string) string {
	if strings.TrimSpace(piece) == "sky" {
		w.n++
		return " [REDACTED]"
	}
	return piece
}
func (w *mask) Flush() string          { return "" }
func (w *mask) Counts() map[string]int { return map[string]int{"test": w.n} }

// The shadow's answer passes through the alias's redaction window, as the client's did:
// the similarity compares what the client got with what it would have got.
func TestShadowRedacted(t *testing.T) {
	p := &fake{words: []string{"The", " sky", " is", " blue"}}
	c := newCollector()
	m := New(Options{Targets: map[string]Target{"pool": {Chain: one("b/m", "m", p), Percent: 100,
		Relay: relay.Options{NewWindow: func() relay.Window { return &mask{} }}}}, Record: c.record, Log: quiet()})
	m.Observe(served("The [REDACTED] is blue"))
	<-c.got
	m.Close()
	r := c.recs[0]
	if r.Similarity != 1 || r.Redactions != 1 || Text(r.Response) != "The [REDACTED] is blue" {
		t.Errorf("got similarity %v, %d redactions, text %q; want 1, 1, the masked answer", r.Similarity, r.Redactions, Text(r.Response))
	}
}

// A shadow that holds its answer is never waited for: Observe returns while the call is
// held, and Close cuts it short, its record saying it timed out or was canceled.
func TestSlowShadowNotWaited(t *testing.T) {
	p := &fake{block: true, started: make(chan struct{})}
	c := newCollector()
	m := New(Options{Targets: map[string]Target{"pool": {Chain: one("b/m", "m", p), Percent: 100}},
		Record: c.record, Log: quiet()})
	m.Observe(served("answer")) // returns with the shadow call still to start, or held
	<-p.started
	c.mu.Lock()
	n := len(c.recs)
	c.mu.Unlock()
	if n != 0 {
		t.Fatalf("got %d records while the shadow call is held, want 0", n)
	}
	m.Close()
	if len(c.recs) != 1 || c.recs[0].Kind == llm.KindNone || c.recs[0].Error == "" || c.recs[0].Similarity != 0 {
		t.Fatalf("got records %+v, want one failed record without similarity", c.recs)
	}
	m.Observe(served("after close")) // does nothing
	if len(c.recs) != 1 || len(p.got) != 1 {
		t.Errorf("after Close: got %d records, %d calls; want 1, 1", len(c.recs), len(p.got))
	}
}

// A shadow target that refuses is recorded with the chain's error, its status and no
// similarity.
func TestFailingShadow(t *testing.T) {
	p := &fake{err: &llm.Error{Kind: llm.Unavailable, Status: 500, Message: "upstream failed"}}
	c := newCollector()
	m := New(Options{Targets: map[string]Target{"pool": {Chain: one("b/m", "m", p), Percent: 100}},
		Record: c.record, Log: quiet()})
	m.Observe(served("answer"))
	<-c.got
	m.Close()
	if len(c.recs) != 1 {
		t.Fatalf("got %d records, want 1", len(c.recs))
	}
	r := c.recs[0]
	if r.Kind != llm.Unavailable || r.Status != 502 || !strings.Contains(r.Error, "b/m") || r.Similarity != 0 || !r.Shadow ||
		r.Target != "b/m" || r.Attempts != 1 {
		t.Errorf("got kind %v, status %d, error %q, similarity %v, shadow %v, target %q, %d attempts; want unavailable, 502, the chain's error naming b/m, 0, true, b/m, 1",
			r.Kind, r.Status, r.Error, r.Similarity, r.Shadow, r.Target, r.Attempts)
	}
}

// Beyond Concurrency calls in flight, a request is not mirrored (Dropped counts it).
func TestConcurrencyBound(t *testing.T) {
	p := &fake{block: true, started: make(chan struct{})}
	m := New(Options{Targets: map[string]Target{"pool": {Chain: one("b/m", "m", p), Percent: 100}},
		Concurrency: 1, Log: quiet()})
	m.Observe(served("one"))
	<-p.started
	m.Observe(served("two"))
	m.Observe(served("three"))
	if got := m.Dropped(); got != 2 {
		t.Errorf("got %d dropped, want 2", got)
	}
	m.Close()
	if len(p.got) != 1 {
		t.Errorf("got %d shadow calls, want 1", len(p.got))
	}
}

// Only a request one provider round served is mirrored, by its alias's share.
func TestNotMirrored(t *testing.T) {
	tests := []struct {
		name   string
		change func(*telemetry.Access)
		draw   float64
	}{
		{"failed", func(in *telemetry.Access) { in.Kind, in.Status = llm.Unavailable, 502 }, 0},
		{"client left", func(in *telemetry.Access) { in.Kind, in.Status = llm.Canceled, 499 }, 0},
		{"no answer", func(in *telemetry.Access) { in.Response = nil }, 0},
		{"cache hit", func(in *telemetry.Access) { in.Cache = "hit" }, 0},
		{"server-side tools", func(in *telemetry.Access) { in.Tools = 1 }, 0},
		{"a shadow's record", func(in *telemetry.Access) { in.Shadow = true }, 0},
		{"other alias", func(in *telemetry.Access) { in.Alias = "other" }, 0},
		{"outside the share", func(*telemetry.Access) {}, 0.05},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &fake{words: []string{"x"}}
			m := New(Options{Targets: map[string]Target{"pool": {Chain: one("b/m", "m", p), Percent: 5}},
				Log: quiet(), Sample: func() float64 { return tt.draw }})
			in := served("answer")
			tt.change(in)
			m.Observe(in)
			m.Close()
			if len(p.got) != 0 {
				t.Errorf("got %d shadow calls, want 0", len(p.got))
			}
		})
	}
}

// No target: no Mirror, and a nil Mirror does nothing.
func TestNilMirror(t *testing.T) {
	m := New(Options{})
	if m != nil {
		t.Fatalf("got %v, want nil", m)
	}
	m.Observe(served("x"))
	if err := m.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestSimilarity(t *testing.T) {
	tests := []struct {
		name, a, b string
		want       float64
	}{
		{"same", "The sky is blue.", "the SKY, is blue", 1},
		{"disjoint", "yes", "no", 0},
		{"half", "a b", "b c d", 0.25},
		{"both empty", "", "  ", 1},
		{"one empty", "", "text", 0},
		{"repetition", "go go go", "go", 1},
		{"unicode", "Größe straße", "größe", 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Similarity(tt.a, tt.b); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("Similarity(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

// FuzzSimilarity: any two texts score in [0, 1], the same either way round, 1 against
// themselves, and exactly what jaccard, the definition, gives.
func FuzzSimilarity(f *testing.F) {
	f.Add("The sky is blue.", "the sky is grey")
	f.Add("", "x")
	f.Add("Größe STRASSE İstanbul", "größe strasse i̇stanbul x\xff")
	f.Fuzz(func(t *testing.T, a, b string) {
		s := Similarity(a, b)
		if s < 0 || s > 1 || s != Similarity(b, a) || Similarity(a, a) != 1 || s != jaccard(a, b) {
			t.Errorf("Similarity(%q, %q) = %v, reversed %v, self %v, by the definition %v",
				a, b, s, Similarity(b, a), Similarity(a, a), jaccard(a, b))
		}
	})
}

// jaccard is Similarity by its definition: the two texts' sets of words (runs of letters and
// digits, lower-cased), common ones over all.
func jaccard(a, b string) float64 {
	set := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			m[strings.ToLower(w)] = true
		}
		return m
	}
	wa, wb := set(a), set(b)
	if len(wa) == 0 && len(wb) == 0 {
		return 1
	}
	common := 0
	for w := range wa {
		if wb[w] {
			common++
		}
	}
	return float64(common) / float64(len(wa)+len(wb)-common)
}

// BenchmarkSimilarity: two answers of about 120 words that differ in a few, the cost of the
// figure on each shadow call: 9 allocations, 3.5 KB (by word sets of their own: 42, 13.7 KB).
func BenchmarkSimilarity(b *testing.B) {
	const para = "The gateway sends each request to the fastest target of its group, measured by a peak EWMA of the time to first token. "
	real := strings.Repeat(para, 5) + "It also mirrors a share of requests to a shadow target."
	shadow := strings.Repeat(strings.ReplaceAll(para, "fastest", "quickest"), 5) + "It mirrors some requests to a shadow model too."
	b.ReportAllocs()
	for b.Loop() {
		Similarity(real, shadow)
	}
}
