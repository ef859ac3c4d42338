// Package shadow decides traffic mirroring (issue 49): which served requests of an alias are
// asked again of its shadow target, and what is kept of the shadow's answer. A shadow call
// starts from the request's complete access record (the request log's hook, after the relay,
// the output guardrails and the usage accounting: DESIGN §1), runs in the background with
// its own timeout, and goes nowhere but the request log, as a record of its own with
// shadow: true. It never delays, changes or fails the client's answer, and its cost is not
// charged to the key: the record names no key and no team, and its wire is "shadow".
package shadow

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/relay"
	"github.com/sluice-gw/sluice/internal/telemetry"
	"github.com/sluice-gw/sluice/internal/turn"
)

// Wire is the wire of a shadow call's record: what /admin/usage groups its cost under,
// apart from every client wire.
const Wire = "shadow"

// Defaults of Options.
const (
	// DefaultConcurrency bounds the shadow calls in flight: a request mirrored while they
	// are all busy is not mirrored (counted by Dropped), never queued.
	DefaultConcurrency = 16
	// DefaultTimeout bounds one shadow call, from its start to its last event.
	DefaultTimeout = 60 * time.Second
)

// Target is an alias's shadow: a chain of its one target (no health: a shadow's failure
// puts nothing in cooldown), and the share of the alias's served requests it gets.
type Target struct {
	Chain   *fallback.Chain
	Percent float64 // 0 to 100
	// Relay is the alias's relay options (its redaction window, think filter): the shadow's
	// answer passes through what the client's did, so that the two compare like for like.
	Relay relay.Options
}

// Options configure a Mirror.
type Options struct {
	// Targets are the shadows, by alias.
	Targets map[string]Target
	// Concurrency and Timeout: 0 takes DefaultConcurrency and DefaultTimeout.
	Concurrency int
	Timeout     time.Duration
	// Cost is the USD price of usage u of model at target (the price table); nil: 0.
	Cost func(target, model string, u llm.Usage) float64
	// Record takes each shadow call's complete record (the request log); nil: none.
	Record func(*telemetry.Access)
	// Log gets one line per shadow call; nil: slog.Default().
	Log *slog.Logger
	// Sample draws a number in [0, 1) per request; nil: math/rand/v2.
	Sample func() float64
}

// Mirror starts the shadow calls of the configured aliases. Observe may be called from any
// goroutine; Close ends the calls in flight and waits for them. A call's goroutine is owned
// by the Mirror: at most Concurrency at once, each stopped by its timeout or by Close.
type Mirror struct {
	o       Options
	slots   chan struct{} // one per call in flight; a bounded pool, full means skip
	ctx     context.Context
	cancel  context.CancelFunc
	mu      sync.Mutex // guards closed with the WaitGroup's Add
	closed  bool
	calls   sync.WaitGroup
	dropped atomic.Int64
}

// New returns a Mirror of o's targets; nil when there are none (a nil Mirror's Observe does
// nothing and its Close returns nil).
func New(o Options) *Mirror {
	if len(o.Targets) == 0 {
		return nil
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Sample == nil {
		o.Sample = rand.Float64
	}
	m := &Mirror{o: o, slots: make(chan struct{}, o.Concurrency)}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	return m
}

// Dropped is how many requests chosen for a shadow call got none because Concurrency calls
// were in flight.
func (m *Mirror) Dropped() int64 { return m.dropped.Load() }

// Observe takes the complete access record of a request (telemetry.Options.Record) and, when
// its alias has a shadow and the draw picks it, starts the shadow call in the background. It
// never blocks, and leaves the rest to the call's goroutine, which reads in (complete: no
// one changes it after the record's hooks). Only a request that was served one round by
// a provider is mirrored: not a failed one, a cache hit, a run of server-side tools, nor a
// shadow call's own record.
func (m *Mirror) Observe(in *telemetry.Access) {
	if m == nil || in.Shadow || in.Kind != llm.KindNone || in.Request == nil || in.Response == nil || in.Cached() || in.Tools > 0 {
		return
	}
	t, ok := m.o.Targets[in.Alias]
	if !ok || m.o.Sample()*100 >= t.Percent {
		return
	}
	select {
	case m.slots <- struct{}{}:
	default:
		m.dropped.Add(1)
		telemetry.Shadow(context.Background(), "dropped")
		return
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		<-m.slots
		return
	}
	m.calls.Add(1)
	m.mu.Unlock()
	// The rest is off the request's path: the client's last bytes are written when the
	// record's hooks return. Nothing changes a complete record, which the log holds too.
	go func() {
		defer func() { <-m.slots; m.calls.Done() }()
		req := in.Request.Clone()
		req.Plain = false // a streamed call: its first token is timed
		rec := &telemetry.Access{ID: in.ID, Method: in.Method, Path: in.Path, Model: in.Model, Alias: in.Alias,
			Stream: in.Stream, Wire: Wire, UserAgent: in.UserAgent, Capture: in.Capture, Request: req, Shadow: true}
		m.call(t, rec, in.Response)
	}()
}

// call asks t the request of rec, fills rec with the answer, its similarity to real (the
// client's answer) and its cost, and records it.
func (m *Mirror) call(t Target, rec *telemetry.Access, real *llm.Response) {
	ctx, cancel := context.WithTimeout(m.ctx, m.o.Timeout)
	defer cancel()
	_, rec.Record = telemetry.RequestIDs("")
	rec.Start = time.Now()
	ch := t.Chain
	run := ch.Start(rec.Request)
	tt := &turn.Turn{Run: run, Mode: turn.Whole, Request: rec.Request, Relay: t.Relay}
	tt.Relay.Start = rec.Start // the first token counts from the shadow call's start
	resp, model, err := answer(ctx, tt)
	rec.Duration = time.Since(rec.Start)
	rec.Status, rec.Kind = llm.HTTPStatus(err), llm.KindOf(err)
	if resp != nil {
		rec.Round(resp)
		if m.o.Cost != nil {
			rec.CostUSD = m.o.Cost(resp.Target, model, resp.Usage)
		}
		if err == nil {
			rec.Similarity = Similarity(Text(real), Text(resp))
		}
	}
	rec.Tries, rec.Attempts = run.Attempts, len(run.Attempts)
	if rec.Target = ch.Targets[0].Name; len(run.Attempts) > 0 {
		rec.Target = run.Attempts[len(run.Attempts)-1].Target
	}
	if err != nil {
		rec.Error = telemetry.ErrorText(err)
	}
	outcome := "served"
	if err != nil {
		outcome = rec.Kind.String()
	}
	telemetry.Shadow(ctx, outcome)
	// One line per shadow call, as the access line is per request: never the text.
	m.o.Log.Info("shadow", "id", rec.ID, "record", rec.Record, "alias", rec.Alias, "target", rec.Target, "kind", rec.Kind.String(),
		"ms", float64(rec.Duration.Microseconds())/1000, "similarity", rec.Similarity, "cost_usd", rec.CostUSD)
	if m.o.Record != nil {
		m.o.Record(rec)
	}
}

// answer is the complete answer of t's one whole round (its chain's timeouts, no client, no
// guardrails, no meter: t has none) sent nowhere, with the upstream model that gave it.
func answer(ctx context.Context, t *turn.Turn) (*llm.Response, string, error) {
	st, err := t.Run.Next(ctx)
	if err != nil {
		return nil, "", err
	}
	resp, st, err := t.Round(ctx, discard{}, st)
	if st == nil {
		return resp, "", err
	}
	st.Close()
	if resp != nil {
		resp.Target, resp.Attempts, resp.FirstEvent = st.Target, t.Run.Attempts, st.FirstEvent()
	}
	return resp, st.Model, err
}

// discard is the client of a shadow's round: nobody sees its answer.
type discard struct{}

func (discard) Serving(*fallback.Stream)                  {}
func (discard) Open(*fallback.Stream) (relay.Sink, error) { return discard{}, nil }
func (discard) Relayed() bool                             { return false }
func (discard) Restart(string)                            {}
func (discard) Event(*llm.Event) error                    { return nil }

// Close cancels the shadow calls in flight and waits for them (their records, cut short,
// still reach Record). Observe does nothing after it. Safe to call more than once.
func (m *Mirror) Close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	m.calls.Wait()
	return nil
}

// Text is the answer of r as the similarity compares it: each choice's text, then its tool
// calls as name and arguments.
func Text(r *llm.Response) string {
	var b strings.Builder
	for _, ch := range r.Choices {
		b.WriteString(ch.Text)
		for _, tc := range ch.ToolCalls {
			b.WriteString(" " + tc.Name + " " + tc.Arguments)
		}
	}
	return b.String()
}
