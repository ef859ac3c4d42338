package runs

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/guard"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/relay"
	"github.com/sluice-gw/sluice/internal/uistream"
	"github.com/sluice-gw/sluice/internal/usage"
)

// Spec is what a run needs: who started it, the chain walk the request began, and the policy.
type Spec struct {
	Chat string
	Key  string // id of the caller's virtual key ("" with auth off): resume and stop check it
	// Version is the schema the client parses with; the run's frames are encoded once, in it.
	Version uistream.Version
	// MessageID is the assistant message the run writes ("" for a new one).
	MessageID string
	Model     string // the model the client asked for, for the start metadata
	Request   *llm.Request
	Chain     *fallback.Run // started with Request, not yet walked
	Relay     relay.Options
	// Restart is the alias's on_midstream_failure: restart.
	Restart bool
	// Guards judge each round's complete response (output guardrails): a refusal by one whose
	// action is retry restarts the round on the next target, any other ends the run. A round
	// is held from the client until they passed when one of them holds (mode hold, DESIGN
	// §6).
	Guards guard.Set
	// Tools runs the tool calls the gateway owns; nil: every call goes to the client.
	Tools Tools
	// Prices prices each round's usage for the metadata's costUsd; nil: no cost is sent.
	Prices Pricer
	// Admit checks each round after the first before it is sent; nil: later rounds are not
	// checked.
	Admit Admitter
}

// Pricer prices a target's usage (usage.Prices).
type Pricer interface {
	Lookup(target, model string) (usage.Price, bool)
}

// Admitter checks a later round of a run before it is sent: the key's rate limits and budget
// (DESIGN §6: each round of a run is checked). spent is the cost of the run's rounds so far
// in nano-USD (0 without Prices). An error ends the run with it.
type Admitter interface {
	Admit(ctx context.Context, req *llm.Request, spent int64) error
}

// Tools runs server-side tools (DESIGN §8; package tools): the seam of the round loop.
type Tools interface {
	// Owns reports whether the gateway runs the tool.
	Owns(name string) bool
	// Run runs the calls (all owned), in order, writing their progress and outputs with enc,
	// and returns the tool messages the next round sends back. A failed tool is an error
	// result, not an error: Run fails only when ctx ends (the run was stopped).
	Run(ctx context.Context, calls []llm.ToolCall, enc *uistream.Encoder) ([]llm.Message, error)
}

// Causes of a run's end that are not failures of its target.
var (
	errStopped  = errors.New("run stopped")
	errShutdown = errors.New("the gateway replica is shutting down")
	errLost     = errors.New("the run is no longer this replica's")
)

// Run is a run this replica owns. The POST that started it reads what it served; the run
// itself belongs to the Manager. Methods are safe for concurrent use.
type Run struct {
	m      *Manager
	sp     Spec
	id     string
	owner  string
	store  Store                   // the manager's, or its memory while the Store was down
	cancel context.CancelCauseFunc // of the context the loop runs in
	feed   *feed
	enc    *uistream.Encoder // the loop's only

	dirty  chan struct{} // capacity 1: frames are waiting for the keeper
	ended  chan struct{} // closed when the loop wrote its last frame
	silent atomic.Bool   // crashed or lost: nothing more is written anywhere

	mu       sync.Mutex
	pending  []Frame
	early    error // the chain failed before commit: nothing was served
	target   string
	attempts int // targets tried: the chain's calls but those of later rounds (Served)
	later    int // calls of the later rounds (fallback.Run.Again), retries included
	// head is Served at the first commit (Headed); headed once it is set.
	head struct {
		target   string
		attempts int
	}
	headed bool
	usage  llm.Usage
	last   *llm.Response // the last round's, for the request's span (Calls)
}

// ID is the run's id.
func (r *Run) ID() string { return r.id }

// Early is the chain's failure when it failed before commit (an HTTP error for a client
// that has seen nothing), nil otherwise. Valid once the first frame was read.
func (r *Run) Early() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.early
}

// Served is the target serving the run and its attempts so far: how many times a target was
// tried to serve it (each fallback, retry and restart), as X-Sluice-Attempts counts them for
// any request; the later tool rounds on the served target are not attempts (the metadata's
// calls counts every upstream call).
func (r *Run) Served() (target string, attempts int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.target, r.attempts
}

// Calls are the run's upstream calls, every attempt of every round (the request's attempt
// spans and client metrics), and its last round's response (nil when none completed). Call
// it once the run ended (Ended): the loop appends to the attempts until then.
func (r *Run) Calls() ([]llm.Attempt, *llm.Response) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.sp.Chain.Attempts), r.last
}

// Headed is what the response headers of the connection that starts the run say: the
// target of the run's first commit and the attempts until then (Served before the first
// commit). Those headers leave with the first frames, which follow that commit; when they
// actually leave depends on the reader's pace, and taking Served then would make a later
// restart show in them or not by scheduling. A restart is told by the frames (reset-step,
// the metadata) and counted by the access line (Served at the end).
func (r *Run) Headed() (target string, attempts int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.headed {
		return r.head.target, r.head.attempts
	}
	return r.target, r.attempts
}

// Ended is closed when the run wrote its last frame (whatever ended it: its answer, an error,
// a stop, a shutdown, or the loss of its lease).
func (r *Run) Ended() <-chan struct{} { return r.ended }

// Usage is the run's usage so far.
func (r *Run) Usage() llm.Usage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.usage
}

// emit is the encoder's output: the frame goes to this replica's readers at once and to the
// Store with the next batch.
func (r *Run) emit(seq int64, b []byte) {
	if r.silent.Load() {
		return
	}
	f := Frame{Seq: seq, Data: b}
	r.feed.append(f)
	r.mu.Lock()
	r.pending = append(r.pending, f)
	if n := len(r.pending) - r.m.o.MaxFrames; n > 0 {
		r.pending = r.pending[n:] // the Store would trim them anyway (Redis down meanwhile)
	}
	r.mu.Unlock()
	select {
	case r.dirty <- struct{}{}:
	default:
	}
}

func (r *Run) served(st *fallback.Stream) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.target, r.attempts = st.Target, len(r.sp.Chain.Attempts)-r.later
	if !r.headed {
		r.head.target, r.head.attempts, r.headed = r.target, r.attempts, true
	}
}

// counts are the run's attempts (Served) and its upstream calls so far, for the metadata.
func (r *Run) counts() (attempts, calls int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.attempts, r.attempts + r.later
}

// loop runs the rounds, then writes the end; the keeper stores what it wrote. ctx is the
// run's own: a stop or a shutdown cancels it, with the reason as its cause.
func (r *Run) loop(ctx context.Context) {
	defer close(r.ended)
	enc, fr := r.enc, r.sp.Chain
	st, err := fr.Next(ctx)
	if err != nil {
		r.mu.Lock()
		r.attempts = len(fr.Attempts)
		if ctx.Err() == nil {
			r.early = err
		}
		r.mu.Unlock()
		r.end(ctx, err)
		return
	}
	r.served(st)
	enc.Start(r.sp.MessageID, startMeta(r.id, r.sp.Model))
	req := r.sp.Request
	var total llm.Usage
	var cost runCost
	for round := 1; ; round++ {
		enc.StartStep()
		resp, next, err := r.round(ctx, st, req)
		if err != nil {
			r.end(ctx, err)
			return
		}
		st = next
		total = total.Plus(resp.Usage)
		cost.add(r.sp.Prices, st.Target, st.Model, resp.Usage)
		r.mu.Lock()
		r.usage, r.last = total, resp
		r.mu.Unlock()
		var ch llm.Choice
		if len(resp.Choices) > 0 {
			ch = resp.Choices[0]
		}
		owned := r.owned(ch.ToolCalls)
		for _, tc := range ch.ToolCalls {
			if r.sp.Tools != nil && r.sp.Tools.Owns(tc.Name) {
				enc.ServerToolCall(tc.ID, tc.Name, tc.Arguments) // the client must not run it
			} else {
				enc.ToolCall(tc.ID, tc.Name, tc.Arguments)
			}
		}
		var results []llm.Message
		if len(owned) > 0 {
			if results, err = r.sp.Tools.Run(ctx, owned, enc); err != nil {
				st.Close()
				r.end(ctx, err)
				return
			}
		}
		enc.FinishStep()
		attempts, calls := r.counts()
		enc.Metadata(roundMeta(round, resp, total, st.Target, attempts, calls, cost.usd()))
		if len(owned) == 0 || len(owned) < len(ch.ToolCalls) {
			st.Close()
			enc.Finish(uistream.FinishReason(ch.Finish), finishMeta(total, st.Target, attempts, calls, cost.usd()))
			enc.Done()
			return
		}
		if round >= r.m.o.MaxRounds {
			// A model that keeps calling tools is stopped with a warning, not an error
			// (DESIGN §8).
			st.Close()
			enc.Data("warning", "", warningData(r.m.o.MaxRounds), true)
			enc.Finish("other", finishMeta(total, st.Target, attempts, calls, cost.usd()))
			enc.Done()
			return
		}
		req = nextRequest(req, ch, results)
		if r.sp.Admit != nil {
			if err := r.sp.Admit.Admit(ctx, req, cost.nano); err != nil {
				st.Close()
				r.end(ctx, err)
				return
			}
		}
		prev := st
		before := len(fr.Attempts)
		st, err = fr.Again(ctx, prev, req)
		r.mu.Lock()
		r.later += len(fr.Attempts) - before
		r.mu.Unlock()
		prev.Close()
		if err != nil {
			r.end(ctx, llm.Midstream(prev.Target, err))
			return
		}
		r.served(st)
	}
}

// owned returns the calls the gateway runs itself.
func (r *Run) owned(calls []llm.ToolCall) []llm.ToolCall {
	if r.sp.Tools == nil {
		return nil
	}
	var out []llm.ToolCall
	for _, c := range calls {
		if r.sp.Tools.Owns(c.Name) {
			out = append(out, c)
		}
	}
	return out
}

// nextRequest is req with the round's answer and its tool results appended.
func nextRequest(req *llm.Request, ch llm.Choice, results []llm.Message) *llm.Request {
	next := req.Clone()
	msgs := make([]llm.Message, 0, len(req.Messages)+1+len(results))
	msgs = append(msgs, req.Messages...)
	am := llm.Message{Role: llm.RoleAssistant, ToolCalls: ch.ToolCalls, Reasoning: ch.Opaque}
	if ch.Text != "" {
		am.Parts = []llm.Part{{Type: llm.PartText, Text: ch.Text}}
	}
	msgs = append(msgs, am)
	next.Messages = append(msgs, results...)
	return next
}

// end writes how a run that did not finish ends: abort when stopped, the error then finish
// otherwise, nothing when it is no longer this replica's to write.
func (r *Run) end(ctx context.Context, err error) {
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, errLost):
		return
	case errors.Is(cause, errStopped):
		r.enc.Abort("stopped")
	case errors.Is(cause, errShutdown):
		r.enc.Error("The run was interrupted: the gateway replica serving it shut down.")
		r.enc.Finish("error", nil)
	default:
		r.enc.Error(llm.Public(err).Message) // never a secret, never a Go error's text
		r.enc.Finish("error", nil)
	}
	r.enc.Done()
}
