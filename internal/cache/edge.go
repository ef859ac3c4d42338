package cache

import (
	"context"
	"strconv"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/relay"
	"github.com/sluice-gw/sluice/internal/sse"
	"github.com/sluice-gw/sluice/internal/telemetry"
	"github.com/sluice-gw/sluice/internal/turn"
)

var _ turn.Keeper = (*Fill)(nil)

// Client is cl decorated for the fill's round (turn.Keeper): what each sink cl opens
// receives is recorded (Sink), and a leader's round outlives its client (turn.Outliving):
// once the client left, the round's events go to a sink that drops them, recorded all the
// same, for the requests that follow.
func (f *Fill) Client(cl turn.Client) turn.Client {
	rc := recording{Client: cl, f: f}
	if f.Leading() {
		return turn.Outliving(rc, func(st *fallback.Stream) relay.Sink { return f.Sink(discard{}, st.Model, st.Target) })
	}
	return rc
}

type recording struct {
	turn.Client
	f *Fill
}

func (r recording) Open(st *fallback.Stream) (relay.Sink, error) {
	sk, err := r.Client.Open(st)
	if err != nil {
		return nil, err
	}
	return r.f.Sink(sk, st.Model, st.Target), nil
}

type discard struct{}

func (discard) Event(*llm.Event) error { return nil }

// reply is a request's side of the cache: its edge (headers, access record), its client's
// wire and its output guardrails. No provider is called for an answer from the cache, so no
// token is spent (the limiter reconciles the reservation to zero). It belongs to the
// request's goroutine.
type reply struct {
	e      turn.Edge
	w      turn.Wire
	judge  func(context.Context, *llm.Response) error
	stream bool
	how    Result
	model  string
	ew     *sse.Writer // the event stream, once a wait or the answer started it
	open   bool        // the answer's stream started
}

// result says what the cache did for the request: X-Sluice-Cache, the access record
// (cache= in the log line), the metrics and the span; saved is the tokens a hit did not
// spend.
func (a *reply) result(ctx context.Context, r Result, saved int) {
	in := a.e.Access()
	in.Cache = string(r)
	a.e.Header("X-Sluice-Cache", string(r))
	telemetry.Cache(ctx, in.Model, string(r), saved)
}

// waiting starts, for a streamed client, keepalives while it waits, on the writer that
// serves its stream whatever comes of the wait (turn.Edge.Stream). Should they send the
// headers, the cache's two are declared trailers.
func (a *reply) waiting() {
	if a.stream && a.ew == nil {
		a.ew = a.e.Stream(true)
	}
}

// start sends the headers of an answer from the cache (with the first events, for a
// stream) and returns the wire's sink. An error means the client left.
func (a *reply) start(model, target string, age int64, how Result) (Sink, error) {
	a.how, a.model = how, model
	in := a.e.Access()
	in.Target, in.Usage = target, &telemetry.Usage{}
	headers := func() {
		a.e.Header("X-Sluice-Cache", string(how))
		a.e.Header("Age", strconv.FormatInt(age, 10))
		a.e.Header("X-Sluice-Target", target)
		a.e.Header("X-Sluice-Attempts", "0")
	}
	if !a.stream {
		headers()
		return a.w.Attempt(model), nil
	}
	a.open, a.ew = true, a.e.Stream(false)
	if err := a.ew.Begin(headers); err != nil {
		return nil, err
	}
	return a.w.Open(a.ew, model)
}

// Open is start for a follower that streams the answer as it comes (Follower).
func (a *reply) Open(model, target string) (Sink, error) {
	return a.start(model, target, 0, Coalesced)
}

// finish ends the started answer with the complete response: a stream's last events, or
// the body.
func (a *reply) finish(ctx context.Context, resp *llm.Response) error {
	a.e.Access().Response = resp
	a.result(ctx, a.how, resp.Usage.TotalTokens)
	if !a.stream {
		return a.e.Body(a.w.Body(a.model, resp))
	}
	defer a.ew.Close()
	if a.w.End(&resp.Usage) != nil {
		a.e.Access().Kind = llm.Canceled // the client stopped reading
	}
	return nil
}

// fail answers err (the client left, the answer was refused, or the answer it followed
// failed after it started): a plain HTTP error while the headers have not left, else the
// wire's in-band failure (none for a client that left): after the stream started, or once
// a keepalive sent the headers while the request waited.
func (a *reply) fail(ctx context.Context, err error) error {
	ew := a.ew
	if ew != nil {
		defer ew.Close()
	}
	if !a.open && (ew == nil || !ew.Quiet()) {
		return a.e.Error(err)
	}
	in := a.e.Access()
	if in.Kind = llm.KindOf(err); in.Kind != llm.Canceled {
		in.Error = telemetry.ErrorText(err)
		_ = a.w.Fail(ew, err)
	}
	if a.open {
		a.result(ctx, a.how, 0)
	}
	return nil
}

// entry answers with the complete e: judged, then its events replayed into the wire.
func (a *reply) entry(ctx context.Context, e *Entry, r Result, age int64) error {
	resp := e.Response
	if err := a.judge(ctx, &resp); err != nil {
		return a.fail(ctx, err)
	}
	sk, err := a.start(e.Model, e.Target, age, r)
	if err == nil {
		err = e.Replay(sk)
	}
	if err != nil {
		return a.fail(ctx, &llm.Error{Kind: llm.Canceled, Message: "client went away", Err: err})
	}
	return a.finish(ctx, &resp)
}
