// Package turn runs a round: it relays a committed stream to the client's sink, accounts for
// it, screens it with the output guardrails, and decides what a failure means: fall back to
// the next target while the client has seen nothing, restart the round where the policy
// allows it, or fail with the in-band error (DESIGN §4 to §6). It is the only caller of
// relay.Run. Every client wire (Chat Completions, Responses, frontend runs) runs its rounds
// here, through a Client: turn knows no HTTP and no wire.
package turn

import (
	"context"
	"time"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/guard"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/relay"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// Mode is how a round's output reaches the client.
type Mode uint8

const (
	// Live: as it is relayed. Once a round committed, its failure cannot fall back: the
	// client saw part of the answer.
	Live Mode = iota
	// Held: recorded, and replayed to the client once the complete round passed its output
	// guardrails (mode hold). Until then the client saw nothing: a failure falls back.
	Held
	// Whole: not written; the client gets the assembled answer (a non-streamed request). A
	// failure at any point falls back.
	Whole
)

// Client is the side of the client that a round writes to: a streamed HTTP answer, a
// non-streamed one, a frontend run's encoder. Its methods are called on the round's
// goroutine.
type Client interface {
	// Serving is called with each stream the round is served by (the first too) before it
	// is relayed.
	Serving(st *fallback.Stream)
	// Open returns the sink of st's output: at the start of each relay of a live or whole
	// round (fresh each time for a whole one: an abandoned attempt's output is not the
	// answer), once it passed for a held one. An error means the client left.
	Open(st *fallback.Stream) (relay.Sink, error)
	// Relayed is called when a relay ended, before its accounting and guardrails, which may
	// wait: a live client flushes what it holds back. It reports whether the client stopped
	// reading (a write failed): a failure is then the client's, not the target's.
	Relayed() (gone bool)
	// Restart tells the client that the round starts again on another target: a live
	// client drops what it got (Turn.Restart and Turn.Retry only).
	Restart(failed string)
}

// Outliving is cl for a round that goes on when its client leaves (a cache leader's, whose
// answer other requests wait for): an Open that fails (the client left) gives the sink
// instead(st), and the client's failed writes never end the round (Relayed reports it
// there).
func Outliving(cl Client, instead func(st *fallback.Stream) relay.Sink) Client {
	return outliving{cl, instead}
}

type outliving struct {
	Client
	instead func(*fallback.Stream) relay.Sink
}

func (o outliving) Open(st *fallback.Stream) (relay.Sink, error) {
	if sk, err := o.Client.Open(st); err == nil {
		return sk, nil
	}
	return o.instead(st), nil
}

func (o outliving) Relayed() bool { o.Client.Relayed(); return false }

// Meter accounts for each relay of a round, a failed one too: what it used is paid for.
// Round is given the relay's target and the model it served (admit.Ticket is one).
type Meter interface {
	Round(target, model string, resp *llm.Response, err error)
}

// Turn is how the rounds of one request run. It is the request's: not safe for concurrent
// use.
type Turn struct {
	// Run is the request's walk of its chain; Round falls back and restarts on it.
	Run  *fallback.Run
	Mode Mode
	// Relay is the relay's options; a zero Start is each relay's own start.
	Relay relay.Options
	// Guards judge each complete round of Request (nil: none).
	Guards  guard.Set
	Request *llm.Request
	Meter   Meter // nil: not accounted
	// Restart restarts a live round whose target failed after the round began on the next
	// target (an alias's on_midstream_failure: restart), with Client.Restart first.
	Restart bool
	// Retry restarts a round that a guardrail with action retry refused on the next target;
	// without it such a refusal ends the request as any other.
	Retry bool
	// Locked holds the request to its committed target whatever the mode (a frontend run:
	// the client saw the run start, and the target is the turn's, DESIGN §3): a failure
	// restarts or fails, it never falls back.
	Locked bool
}

// Round relays the round st serves (committed) to c until it ends, and returns its response
// and the stream that served it, still open: the caller closes it (a run asks it for the
// next round). An error has closed every stream; it is, with the response and stream of the
// round it concerns where there is one:
//   - the client's: a Canceled error (the context ended, or the client stopped reading);
//   - a refusal by an output guardrail (Refused, never the target's fault);
//   - for a held or whole round that is not Locked, the chain's failure when no target is
//     left (with no stream);
//   - else llm.Midstream of the target that failed, or the chain's failure when a restart
//     found no target.
func (t *Turn) Round(ctx context.Context, c Client, st *fallback.Stream) (*llm.Response, *fallback.Stream, error) {
	for {
		c.Serving(st)
		resp, rec, err := t.relay(ctx, c, st)
		gone := c.Relayed()
		if t.Meter != nil {
			t.Meter.Round(st.Target, st.Model, resp, err)
		}
		var refusal *guard.Refusal
		if err == nil {
			if refusal = t.judge(ctx, resp); refusal != nil {
				err = Refused(refusal)
			}
		}
		if err == nil && rec != nil {
			err = replay(c, st, rec)
		}
		if err == nil {
			return resp, st, nil
		}
		if ctx.Err() != nil || gone || llm.KindOf(err) == llm.Canceled {
			st.Close()
			return resp, st, canceled(ctx, err)
		}
		if refusal == nil {
			t.Run.Fail(st, err) // before Close: a stream closed first gives the target no verdict
		}
		st.Close()
		failed := st
		retry := refusal != nil && refusal.Retry && t.Retry
		switch {
		case refusal == nil && t.Mode != Live && !t.Locked:
			st, err = t.Run.Next(ctx) // the client saw nothing: the next target
			failed = nil
		case t.Run.Left() && (retry || (refusal == nil && t.Restart)):
			reason := llm.KindOf(err).String()
			if retry {
				reason = "guardrail_retry"
			}
			telemetry.Restart(ctx, failed.Target, reason)
			if t.Mode == Live {
				c.Restart(failed.Target) // nothing of a held round reached the client
			}
			st, err = t.Run.Restart(ctx, t.Request)
		case refusal != nil:
			return resp, failed, err // a refusal ends the request: another target is not asked
		default:
			return resp, failed, llm.Midstream(failed.Target, err)
		}
		if err != nil {
			return nil, failed, err
		}
	}
}

// Judge is the request's output guardrails on resp, a complete answer: nil, or the error of
// the refusal to answer with (Refused). Every answer the request is given is judged here: a
// round's, and one from the cache.
func (t *Turn) Judge(ctx context.Context, resp *llm.Response) error {
	if r := t.judge(ctx, resp); r != nil {
		return Refused(r)
	}
	return nil
}

func (t *Turn) judge(ctx context.Context, resp *llm.Response) *guard.Refusal {
	return t.Guards.Output(ctx, t.Request, resp)
}

// relay runs one relay of st to c's sink, or to a recorder for a held round.
func (t *Turn) relay(ctx context.Context, c Client, st *fallback.Stream) (*llm.Response, *relay.Recorder, error) {
	var sink relay.Sink
	var rec *relay.Recorder
	if t.Mode == Held {
		rec = &relay.Recorder{}
		sink = rec
	} else {
		var err error
		if sink, err = c.Open(st); err != nil {
			return nil, nil, gone(err)
		}
	}
	o := t.Relay
	if o.Start.IsZero() {
		o.Start = time.Now()
	}
	resp, err := relay.Run(ctx, st, sink, o)
	return resp, rec, err
}

// replay writes a held round, passed, to the client.
func replay(c Client, st *fallback.Stream, rec *relay.Recorder) error {
	sink, err := c.Open(st)
	if err == nil {
		err = rec.Replay(sink)
	}
	if err != nil {
		return gone(err)
	}
	return nil
}

func gone(err error) error {
	return &llm.Error{Kind: llm.Canceled, Message: "client went away", Err: err}
}

// Refused is the error of an answer an output guardrail refused: 422 guardrail_refused
// before the first byte, the in-band error after it; either way not to be retried by the
// client (x-should-retry: false).
func Refused(r *guard.Refusal) error {
	return &llm.Error{Kind: llm.Refused, Code: "guardrail_refused", Type: "invalid_request_error",
		Message: "The answer was refused by " + r.Error() + "."}
}

// canceled is the error of a round the client ended: its context's cause when it ended.
func canceled(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	if llm.KindOf(err) == llm.Canceled {
		return err
	}
	return &llm.Error{Kind: llm.Canceled, Err: err}
}
