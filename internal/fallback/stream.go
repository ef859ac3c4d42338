package fallback

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Stream is a committed attempt: it first replays the events read before commit (the
// preamble and the committing event), then reads on. After commit it enforces the idle
// timeout. Single-use and not safe for concurrent use, except Close, which unblocks Recv.
type Stream struct {
	Target string // "provider/model" that serves
	Model  string // its upstream model name

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
}

var _ llm.Stream = (*Stream)(nil)

// FirstEvent is the time from the run's start to the first healthy upstream event.
func (s *Stream) FirstEvent() time.Duration { return s.firstEvent }

// Recv returns the next event. Errors are sticky; a failure is an *llm.Error naming the target.
func (s *Stream) Recv() (llm.Event, error) {
	if s.err != nil {
		return llm.Event{}, s.err
	}
	if len(s.held) > 0 {
		ev := s.held[0]
		s.held = s.held[1:]
		return ev, nil
	}
	ev, err := s.up.Recv()
	if err != nil {
		if errors.Is(err, io.EOF) {
			s.err = io.EOF
		} else {
			s.err = s.classify(nil, err)
			var e *llm.Error
			if errors.As(s.err, &e) && e.Target == "" {
				e.Target = s.Target
			}
		}
		s.stopTimers()
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

// Close ends the attempt and releases its connection.
func (s *Stream) Close() error {
	s.stopTimers()
	s.cancel(errAbandoned)
	if s.up != nil {
		return s.up.Close()
	}
	return nil
}

// classify turns an error seen while the attempt's context may have ended into the kind it
// really is: the client leaving (parent canceled), or one of the attempt's own timeouts. A
// nil parent means "use the attempt's own cause".
func (s *Stream) classify(parent context.Context, err error) error {
	if parent != nil && parent.Err() != nil {
		return &llm.Error{Kind: llm.Canceled, Message: "client went away", Err: context.Cause(parent)}
	}
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
	return err
}
