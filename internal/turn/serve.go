package turn

import (
	"context"
	"strconv"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/relay"
	"github.com/sluice-gw/sluice/internal/sse"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// Wire is a request's answer on its client's wire: dialect.Wire's method set, as turn (which
// knows no wire) names it.
type Wire interface {
	Open(ew *sse.Writer, model string) (interface{ Event(*llm.Event) error }, error)
	End(u *llm.Usage) error
	Fail(ew *sse.Writer, err error) error
	Attempt(model string) interface{ Event(*llm.Event) error }
	Body(model string, resp *llm.Response) []byte
}

// Edge is the HTTP side of the request Serve answers: the server implements it (its
// response, its wire's error format, its admission ticket). Its methods are called on the
// request's goroutine.
type Edge interface {
	// Access is the request's access record (its log line, span and statistics): Serve
	// fills in who served, what the round gave and how it ended.
	Access() *telemetry.Access
	// Stream is the request's event stream: the one that started while the request waited
	// for an identical one, or a new one; cached declares the cache's headers as trailers
	// too (they may be known after a keepalive sent the headers).
	Stream(cached bool) *sse.Writer
	// Header sets a header of the answer: before it leaves, or for a stream in the set func
	// of sse.Writer.Begin (a declared trailer when a keepalive sent the headers).
	Header(name, value string)
	// Cost sets X-Sluice-Cost-Usd, the request's cost so far, on an answer that is complete
	// before its headers leave (a non-streamed one, or a held stream).
	Cost()
	// Error answers err as a plain HTTP error in the wire's format, and records its kind.
	Error(err error) error
	// Body answers a non-streamed request with its complete body, 200.
	Body(b []byte) error
}

// Keeper keeps the answer of a request's round for other requests: a response cache's miss
// to store (internal/cache's Fill). Serve calls it on the request's goroutine.
type Keeper interface {
	// Context is the round's context from the request's: a leader's outlives its client.
	// The cancel func must be called.
	Context(ctx context.Context) (context.Context, context.CancelFunc)
	// Client is cl decorated: what the round writes is recorded, and a leader's round goes
	// on when its client leaves.
	Client(cl Client) Client
	// Done stores the answer of the round that succeeded (resp, served by model) and
	// returns the bytes stored and the entries a bound pushed out; End ends a round that
	// gave no answer (no-op after Done).
	Done(ctx context.Context, model string, resp *llm.Response) (n, evicted int)
	End()
	// Alias is the alias the answer is stored for.
	Alias() string
}

// Serve answers the request of t, on its client's wire w through the edge e: its first
// target, its rounds, then the answer or the error. A streamed client (stream) sees its
// answer live, or held until its output guardrails passed it; a non-streamed one sees the
// complete body. k keeps the answer for other requests (nil: none). The error is the
// edge's; every outcome is in e's access record. t.Mode is set here.
func (t *Turn) Serve(ctx context.Context, e Edge, w Wire, stream bool, k Keeper) error {
	cl := func(c Client) Client { return c }
	if k != nil {
		defer k.End()
		var done context.CancelFunc
		ctx, done = k.Context(ctx) // a leader's outlives its client
		defer done()
		cl = k.Client
	}
	if stream {
		return t.stream(ctx, e, w, cl, k)
	}
	return t.once(ctx, e, w, cl, k)
}

// stream serves a streaming client. Before commit a failure is a plain HTTP error, unless a
// keepalive already sent the headers (then the wire's in-band failure). Live, the headers
// leave at commit and a later failure is in-band. Held (an output guardrail in mode hold
// judges the round before any of it leaves, DESIGN §6), the round is recorded and replayed
// through the wire once it is complete and passed: until then the client has seen nothing
// but keepalives, so, as for a non-streamed client, a failure at any point falls back to
// the next target, and a refusal is a plain 422 unless a keepalive already sent the
// headers. Refused text never reaches the client.
func (t *Turn) stream(ctx context.Context, e Edge, w Wire, cl func(Client) Client, k Keeper) error {
	held := t.Guards.Holds()
	t.Mode = Live
	if held {
		t.Mode = Held
	}
	in := e.Access()
	ew := e.Stream(false)
	defer ew.Close()
	st, err := t.Run.Next(ctx)
	if err != nil {
		return t.fail(e, ew, w, nil, err, held)
	}
	resp, st, err := t.Round(ctx, cl(&streamClient{t: t, e: e, ew: ew, w: w, held: held}), st)
	if st != nil {
		defer st.Close()
		if resp != nil && (!held || err == nil || llm.KindOf(err) == llm.Refused) {
			t.finished(in, st, resp)
		}
	}
	if err != nil && held {
		return t.fail(e, ew, w, st, err, true)
	}
	if err == nil {
		if err = w.End(&resp.Usage); err != nil {
			err = &llm.Error{Kind: llm.Canceled, Err: err} // the client stopped reading
		}
		keep(ctx, k, st, resp) // complete, whether or not its client read the end
	}
	in.Kind = llm.KindOf(err)
	if err != nil && llm.KindOf(err) != llm.Canceled {
		in.Error = telemetry.ErrorText(err)
		_ = w.Fail(ew, err) // a refusal, or the target's failure after the answer started
	}
	return nil
}

// fail answers err for a stream whose headers may not have left: a plain HTTP error while
// they have not (with the cost so far, for a held one), else the wire's in-band failure
// (none for a client that left).
func (t *Turn) fail(e Edge, ew *sse.Writer, w Wire, st *fallback.Stream, err error, held bool) error {
	e.Access().Kind = llm.KindOf(err)
	if !ew.Quiet() {
		t.served(e, st)
		if held {
			e.Cost()
		}
		return e.Error(err)
	}
	t.served(e, st) // a declared trailer
	if llm.KindOf(err) != llm.Canceled {
		e.Access().Error = telemetry.ErrorText(err)
		_ = w.Fail(ew, err)
	}
	return nil
}

// once serves a non-streamed client: it has seen nothing until the answer is complete, so a
// failure at any point falls back to the next target.
func (t *Turn) once(ctx context.Context, e Edge, w Wire, cl func(Client) Client, k Keeper) error {
	t.Mode = Whole
	st, err := t.Run.Next(ctx)
	if err != nil {
		t.served(e, nil)
		return e.Error(err)
	}
	resp, st, err := t.Round(ctx, cl(&onceClient{t: t, e: e, w: w}), st)
	if st == nil {
		t.served(e, nil) // no target was left
	} else {
		st.Close()
		if err == nil || llm.KindOf(err) == llm.Refused {
			t.finished(e.Access(), st, resp)
			e.Cost()
		}
	}
	if err != nil {
		return e.Error(err)
	}
	keep(ctx, k, st, resp)
	return e.Body(w.Body(st.Model, resp))
}

// keep stores the answer of a round that succeeded, if k keeps it, and says so in the
// metrics. The client may have left: the answer is complete.
func keep(ctx context.Context, k Keeper, st *fallback.Stream, resp *llm.Response) {
	if k == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	n, evicted := k.Done(ctx, st.Model, resp)
	if n > 0 {
		telemetry.CacheStored(ctx, k.Alias(), n)
	}
	if evicted > 0 {
		telemetry.CacheEvicted(ctx, k.Alias(), evicted)
	}
}

// served records who served so far, the chain's attempts and st's target (st nil: none), in
// the access record and the answer's headers.
func (t *Turn) served(e Edge, st *fallback.Stream) {
	in := e.Access()
	in.Attempts, in.Tries = len(t.Run.Attempts), t.Run.Attempts
	e.Header("X-Sluice-Attempts", strconv.Itoa(in.Attempts))
	if st != nil {
		in.Target = st.Target
		e.Header("X-Sluice-Target", st.Target)
	}
}

// finished completes the round's response with who served it, and the access record with
// it (telemetry.Access.Round).
func (t *Turn) finished(in *telemetry.Access, st *fallback.Stream, resp *llm.Response) {
	resp.Target, resp.Attempts, resp.FirstEvent = st.Target, t.Run.Attempts, st.FirstEvent()
	resp.Affinity = t.Run.Affinity
	in.Round(resp)
}

// streamClient is a streamed answer. Live, the headers leave at commit with the first
// frames, and from then on what is written leaves when the upstream is about to be waited
// for; held, they leave, with the cost, with the replay of a round that passed.
type streamClient struct {
	t    *Turn
	e    Edge
	ew   *sse.Writer
	w    Wire
	held bool
}

func (sc *streamClient) Serving(*fallback.Stream) {}

func (sc *streamClient) Open(st *fallback.Stream) (relay.Sink, error) {
	if !sc.held {
		sc.ew.Batching()
		st.BeforeWait(sc.ew.Release)
	}
	err := sc.ew.Begin(func() {
		sc.t.served(sc.e, st)
		if sc.held {
			sc.e.Cost()
		}
	})
	if err != nil {
		return nil, err
	}
	return sc.w.Open(sc.ew, st.Model)
}

func (sc *streamClient) Relayed() bool {
	sc.ew.Release() // before the guardrails and the accounting, which may wait
	return sc.ew.Failed()
}

func (sc *streamClient) Restart(string) {}

// onceClient is a non-streamed answer: each attempt relays to a fresh sink of the wire, and
// the headers say who served.
type onceClient struct {
	t *Turn
	e Edge
	w Wire
}

func (oc *onceClient) Serving(st *fallback.Stream) { oc.t.served(oc.e, st) }
func (oc *onceClient) Open(st *fallback.Stream) (relay.Sink, error) {
	return oc.w.Attempt(st.Model), nil
}
func (oc *onceClient) Relayed() bool  { return false }
func (oc *onceClient) Restart(string) {}
