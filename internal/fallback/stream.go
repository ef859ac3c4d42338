package fallback

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Stream is a committed attempt: it first replays the events read before commit (the
// preamble and the committing event), exactly once, then reads on. After commit it enforces
// the idle and total timeouts. It reports the attempt's verdict to the chain's Health once:
// success at the clean end, failure at an error (a client that left is neither). Single-use
// and not safe for concurrent use, except Close, which unblocks Recv.
type Stream struct {
	Target string // "provider/model" that serves
	Model  string // its upstream model name

	run     *Run
	up      llm.Stream
	held    []llm.Event
	attempt int
	ctx     context.Context
	cancel  context.CancelCauseFunc
	idle    time.Duration
	idleT   *time.Timer
	total   *time.Timer
	// firstEvent is the time from the run's start to the committing event.
	firstEvent time.Duration
	err        error
	settled    sync.Once
	wait       func() // see BeforeWait: run before each Recv of an upstream that is no llm.Waiter
}

var (
	_ llm.Stream = (*Stream)(nil)
	_ llm.Waiter = (*Stream)(nil)
)

// FirstEvent is the time from the run's start to the first healthy upstream event.
func (s *Stream) FirstEvent() time.Duration { return s.firstEvent }

// BeforeWait implements llm.Waiter. An upstream stream that is one calls f when it is about
// to read the network; for any other, f runs before each of its Recv calls, that is after
// every event, since any of them may wait.
func (s *Stream) BeforeWait(f func()) {
	if w, ok := s.up.(llm.Waiter); ok {
		w.BeforeWait(f)
		return
	}
	s.wait = f
}

// Recv returns the next event. Errors are sticky; a failure is an *llm.Error naming the target.
func (s *Stream) Recv() (llm.Event, error) {
	if s.err != nil {
		return llm.Event{}, s.err
	}
	if len(s.held) > 0 {
		ev := s.held[0]
		s.held[0] = llm.Event{}
		s.held = s.held[1:]
		return ev, nil
	}
	if s.wait != nil {
		s.wait()
	}
	ev, err := s.up.Recv()
	if err != nil {
		s.stopTimers()
		if errors.Is(err, io.EOF) {
			s.err = io.EOF
			s.run.Attempts[s.attempt].End = time.Now()
			s.settle(nil)
			return llm.Event{}, s.err
		}
		s.err = s.classify(err)
		var e *llm.Error
		if errors.As(s.err, &e) && e.Target == "" {
			e.Target = s.Target
		}
		s.settle(s.err)
		s.run.record(s.attempt, s.err)
		return llm.Event{}, s.err
	}
	s.armIdle()
	return ev, nil
}

func (s *Stream) armIdle() {
	if s.idle <= 0 {
		return
	}
	if s.idleT == nil {
		s.idleT = time.AfterFunc(s.idle, func() { s.cancel(errIdle) })
		return
	}
	s.idleT.Reset(s.idle)
}

func (s *Stream) stopTimers() {
	if s.idleT != nil {
		s.idleT.Stop()
	}
	if s.total != nil {
		s.total.Stop()
	}
}

// Close ends the attempt and releases its connection. A stream closed before its end gives no
// verdict on the target. Safe to call more than once.
func (s *Stream) Close() error {
	s.stopTimers()
	s.cancel(errAbandoned)
	s.settle(errAbandoned)
	if s.up != nil {
		return s.up.Close()
	}
	return nil
}

// settle reports the attempt's verdict to the chain's Health, once: nil is a success; a
// client that left, an abandoned attempt, a request error (another target would refuse it
// too) and a request the target's API cannot carry give the half-open probe back without a
// verdict; anything else is a failure. It ends the attempt in the chain's Load too, with the
// same verdict (a timeout before commit also a latency sample). Only the
// owner's goroutine passes a failure (Close passes errAbandoned), so the run is not shared.
func (s *Stream) settle(err error) {
	s.settled.Do(func() {
		k := llm.KindOf(err)
		neutral := err != nil && (errors.Is(err, errAbandoned) || k == llm.Canceled || k == llm.Invalid || k == llm.Unsupported)
		if ld := s.run.chain.Load; ld != nil {
			v := Failed
			switch {
			case err == nil:
				v = Succeeded
			case neutral:
				v = Neutral
			case k == llm.Timeout && !s.run.Attempts[s.attempt].Committed:
				// A first-event timeout is a slow answer too: the peak EWMA takes it.
				ld.Latency(s.Target, time.Since(s.run.Attempts[s.attempt].Start))
			}
			ld.End(s.Target, v)
		}
		h := s.run.chain.Health
		if h == nil {
			return
		}
		// The verdict outlives a client who left: the store must still hear it.
		ctx := context.WithoutCancel(s.ctx)
		switch {
		case err == nil:
			h.Success(ctx, s.Target)
		case neutral:
			h.Release(ctx, s.Target)
		default:
			var ra time.Duration
			var e *llm.Error
			if errors.As(err, &e) {
				ra = e.RetryAfter
			}
			s.run.noteCooldown(h.Failure(ctx, s.Target, ra))
		}
	})
}

// classify turns an error seen while the attempt's context may have ended into the kind it
// really is: one of the attempt's own timeouts, or the client leaving (the request's context
// ended, so the attempt's did too).
func (s *Stream) classify(err error) error {
	switch cause := context.Cause(s.ctx); cause {
	case errFirstEvent, errIdle, errTotal:
		return &llm.Error{Kind: llm.Timeout, Message: cause.Error(), Err: err}
	case nil:
	default:
		if s.ctx.Err() != nil && !errors.Is(cause, errAbandoned) {
			// The request's context ended: the client left.
			return &llm.Error{Kind: llm.Canceled, Message: "client went away", Err: cause}
		}
	}
	return netTimeout(err)
}
