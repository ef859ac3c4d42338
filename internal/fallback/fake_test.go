package fallback_test

import (
	"context"
	"io"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// script is what a fake upstream does on one call.
type script struct {
	open   error       // returned by Stream: an HTTP error or a connection failure
	events []llm.Event // then these events
	end    error       // then this error; nil is a clean end (io.EOF)
	stall  bool        // instead of the end: nothing more until the call's context ends
}

// fake is a Provider that plays one script per call (the last one repeats) and behaves like
// a real adapter: Close and the call's context end a blocked Recv, and a context that ended
// surfaces as its cause.
type fake struct {
	mu       sync.Mutex
	scripts  []script
	calls    int
	canceled int           // calls whose context ended before the stream was closed
	called   chan struct{} // receives once per call, if not nil
	ctxs     []context.Context
}

var _ fallback.Provider = (*fake)(nil)

func newFake(s ...script) *fake { return &fake{scripts: s} }

func (f *fake) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *fake) Canceled() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.canceled
}

func (f *fake) Stream(ctx context.Context, req *llm.Request) (llm.Stream, error) {
	f.mu.Lock()
	sc := f.scripts[min(f.calls, len(f.scripts)-1)]
	f.calls++
	f.ctxs = append(f.ctxs, ctx)
	f.mu.Unlock()
	if f.called != nil {
		f.called <- struct{}{}
	}
	if sc.open != nil {
		return nil, sc.open
	}
	ctx, cancel := context.WithCancel(ctx)
	return &fakeStream{f: f, sc: sc, ctx: ctx, cancel: cancel}, nil
}

type fakeStream struct {
	f      *fake
	sc     script
	i      int
	ctx    context.Context
	cancel context.CancelFunc
	closed bool
	err    error
}

func (s *fakeStream) Recv() (llm.Event, error) {
	if s.err != nil {
		return llm.Event{}, s.err
	}
	if s.ctx.Err() != nil {
		return llm.Event{}, s.ended()
	}
	if s.i < len(s.sc.events) {
		s.i++
		return s.sc.events[s.i-1], nil
	}
	switch {
	case s.sc.stall:
		<-s.ctx.Done()
		return llm.Event{}, s.ended()
	case s.sc.end != nil:
		s.err = s.sc.end
	default:
		s.err = io.EOF
	}
	return llm.Event{}, s.err
}

// ended is the sticky error of a Recv that found the call's context ended. It counts in
// canceled unless the stream was closed first, whether the context ended before this Recv
// or while it waited: which of the two happens depends only on scheduling.
func (s *fakeStream) ended() error {
	if !s.closed {
		s.f.mu.Lock()
		s.f.canceled++
		s.f.mu.Unlock()
	}
	s.err = &llm.Error{Kind: llm.Canceled, Message: "canceled", Err: context.Cause(s.ctx)}
	return s.err
}

func (s *fakeStream) Close() error {
	s.closed = true
	s.cancel()
	return nil
}

// Events of a Chat stream.
var (
	evRole   = llm.Event{Type: llm.EvStart, ID: "up", Model: "m"}
	evUsage  = llm.Event{Type: llm.EvUsage, Usage: &llm.Usage{PromptTokens: 3}}
	evEmpty  = llm.Event{Type: llm.EvText}
	evText   = llm.Event{Type: llm.EvText, Text: "Hello"}
	evText2  = llm.Event{Type: llm.EvText, Text: " world."}
	evReason = llm.Event{Type: llm.EvReasoning, Text: "Thinking", Field: "reasoning"}
	evRefuse = llm.Event{Type: llm.EvRefusal, Text: "No."}
	evTool   = llm.Event{Type: llm.EvToolCall, Tool: llm.ToolDelta{ID: "call_1", Name: "f"}}
	evDone   = llm.Event{Type: llm.EvDone, Finish: "stop"}
)

func answer(evs ...llm.Event) script { return script{events: evs} }

var ok = answer(evRole, evText, evText2, evDone)

// Errors as the adapters report them.
var (
	err500     = &llm.Error{Kind: llm.Unavailable, Status: 500, Type: "server_error", Message: "mock answered HTTP 500"}
	err429     = &llm.Error{Kind: llm.RateLimited, Status: 429, Code: "rate_limit_exceeded", Message: "rate limit", RetryAfter: 2e9}
	err401     = &llm.Error{Kind: llm.Auth, Status: 401, Message: "Incorrect API key provided: sk-abc123"}
	err400     = &llm.Error{Kind: llm.Invalid, Status: 400, Message: "bad request"}
	errRefused = &llm.Error{Kind: llm.Unavailable, Message: "mock: dial tcp 127.0.0.1:1: connect: connection refused"}
	errInband  = &llm.Error{Kind: llm.Unavailable, Type: "server_error", Message: "The server had an error"}
	errCut     = &llm.Error{Kind: llm.Truncated, Message: "stream ended before its finish"}
)

func target(name string, p fallback.Provider) fallback.Target {
	return fallback.Target{Name: name, Model: name, Provider: p}
}

// readAll reads a stream to its end: the events and the error that ended it (nil for EOF).
func readAll(t *testing.T, s llm.Stream) ([]llm.Event, error) {
	t.Helper()
	var evs []llm.Event
	for {
		ev, err := s.Recv()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func req() *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "hi"}}}}}
}
