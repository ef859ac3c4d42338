package realtime

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/sluice-gw/sluice/internal/llm"
)

// Defaults of Options.
const (
	// DefaultReadLimit bounds one client event: input_audio_buffer.append carries base64
	// audio, up to 15 MiB of it at OpenAI (a second of 24 kHz PCM16 is some 64 KB).
	DefaultReadLimit = 16 << 20
	// upstreamReadLimit bounds one upstream event (a response.done holds the whole response).
	upstreamReadLimit = 16 << 20
	// DefaultPing is how often the client is pinged; a client that does not answer within
	// the same time is gone.
	DefaultPing = 30 * time.Second
)

// Options are one session's rules. The zero value relays every event unchanged.
type Options struct {
	// NewWindow returns a fresh redaction window for one text stream; nil: no redaction.
	// RedactText masks a whole text (the .done events'), RedactJSON the strings of a raw
	// JSON event (the events that carry whole items).
	NewWindow  func() Window
	RedactText func(string) string
	RedactJSON func(string) string
	// Turn accounts for one response.done, as it arrives; an error ends the session: the
	// client gets it as an error event, then a close (1008, policy violation).
	Turn func(ctx context.Context, t Turn) error
	// ReadLimit bounds a client event (0: DefaultReadLimit): a larger one closes the
	// session with 1009 (message too big). Ping is the client's ping interval (0:
	// DefaultPing).
	ReadLimit int64
	Ping      time.Duration
	// Drain, once done, ends the session (a shutdown): at once between responses, else
	// when the response under way is done or DrainTimeout has passed (0: at once); the
	// client gets a close 1001 (going away). nil: never.
	Drain        context.Context
	DrainTimeout time.Duration
}

// Turn is one response of a session: its usage (response.done's), when it began (its
// response.created; zero: none was seen) and ended (its response.done).
type Turn struct {
	Usage      llm.Usage
	Start, End time.Time
}

// Outcome is how a session went, for its record in the request log.
type Outcome struct {
	Turns int       // response.done events relayed
	Usage llm.Usage // their usage, summed
	Masks map[string]int
	// Err is what ended it: nil when the client closed it normally; a *llm.Error when the
	// gateway ended it (a budget spent) or the upstream failed; Canceled when the client
	// left without a close.
	Err error
	// Code is the close code the client got (0: none was sent: it left, or never upgraded).
	Code websocket.StatusCode
}

// Serve upgrades the client's request (answering the realtime subprotocol when offered,
// never the one carrying its key) and carries the session's events between it and up until
// either ends it, the budget runs out, or ctx ends; it closes up and the client's
// connection before it returns. The upgrade writes the response: the caller writes nothing
// after Serve. Origins are not checked: the key travels in a header or the subprotocol,
// never in a cookie, so another page cannot ride on a browser's credentials.
func Serve(ctx context.Context, w http.ResponseWriter, r *http.Request, up llm.RealtimeConn, o Options) Outcome {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"realtime"}, InsecureSkipVerify: true})
	if err != nil {
		_ = up.Close()
		return Outcome{Err: &llm.Error{Kind: llm.Invalid, Status: http.StatusBadRequest, Message: "WebSocket upgrade failed", Err: err}}
	}
	c.SetReadLimit(orDefault(o.ReadLimit, DefaultReadLimit))
	s := &session{c: c, up: up, o: &o, f: filter{o: &o}}
	return s.run(ctx)
}

// orDefault is v, or d when v is not positive.
func orDefault(v, d int64) int64 {
	if v > 0 {
		return v
	}
	return d
}

// session is one client's session. The goroutine of run reads the upstream and writes the
// client; reader reads the client and writes the upstream; pings go from a timer.
type session struct {
	c  *websocket.Conn
	up llm.RealtimeConn
	o  *Options
	f  filter
	// out is what the session sends the client as it ends.
	out Outcome
	// began is when the response under way was created (zero: none is).
	began time.Time
	// mu guards busy (a response is under way) and draining (Options.Drain is done),
	// between relay and the drain's watch.
	mu             sync.Mutex
	busy, draining bool
}

// errClientClosed is the cause of a session the client ended; errUpstreamGone is the
// reader's end when the upstream took no more events; errDrained the cause of a session a
// shutdown ended.
var (
	errClientClosed = errors.New("client closed the session")
	errUpstreamGone = errors.New("upstream gone")
	errDrained      = errors.New("the gateway is shutting down")
)

func (s *session) run(parent context.Context) Outcome {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	var wg sync.WaitGroup
	wg.Add(1)
	var clientErr error // the reader's, read after wg.Wait
	go func() {
		defer wg.Done()
		if clientErr = s.reader(parent); clientErr != errUpstreamGone {
			cancel(errClientClosed)
		}
	}()
	stopPing := s.pinger(ctx, cancel)
	// The upstream's reads end at a drain; the client's writes go on, to close it cleanly.
	rctx, drain := context.WithCancelCause(ctx)
	stopDrain := s.watchDrain(drain)
	code, reason, err := s.relay(ctx, rctx)
	stopDrain()
	drain(nil)
	stopPing()
	_ = s.up.Close()
	if context.Cause(ctx) == errClientClosed {
		_ = s.c.CloseNow() // the client closed or left: nothing more to say
	} else {
		_ = s.c.Close(code, reason) // the reader gets the client's close and returns
		s.out.Code = code
	}
	wg.Wait()
	switch {
	case err != nil:
		s.out.Err = err
	case clientErr == errUpstreamGone:
	case clientErr != nil && strings.Contains(clientErr.Error(), "read limited at"):
		// The library closed the client with 1009 (message too big); its error says so
		// only in words.
		s.out.Err, s.out.Code = &llm.Error{Kind: llm.Invalid, Status: http.StatusRequestEntityTooLarge,
			Message: "a client event was larger than the limit"}, websocket.StatusMessageTooBig
	case clientErr != nil && websocket.CloseStatus(clientErr) == -1 && s.out.Code == 0:
		s.out.Err = &llm.Error{Kind: llm.Canceled, Message: "the client left", Err: clientErr}
	}
	s.out.Masks = s.f.masks
	return s.out
}

// reader carries the client's events to the upstream, unchanged, until the client closes,
// leaves or sends more than the read limit (the library then closes with 1009).
func (s *session) reader(ctx context.Context) error {
	for {
		typ, msg, err := s.c.Read(ctx)
		if err != nil {
			return err
		}
		if typ != websocket.MessageText {
			_ = s.c.Write(ctx, websocket.MessageText, errorEvent(&llm.Error{Kind: llm.Invalid, Type: "invalid_request_error",
				Code: "invalid_event", Message: "Realtime events are JSON text messages; a binary message was dropped."}))
			continue
		}
		if err := s.up.Write(ctx, msg); err != nil {
			return errUpstreamGone // relay says why
		}
	}
}

// relay carries the upstream's events to the client, filtered, until the upstream ends,
// the client does (ctx), a drain does (rctx, the reads'), or a turn's accounting refuses;
// it returns the close the client gets and the session's error.
func (s *session) relay(ctx, rctx context.Context) (websocket.StatusCode, string, error) {
	for {
		msg, err := s.up.Read(rctx)
		if err != nil {
			return upstreamClose(rctx, err)
		}
		ev, err := s.f.server(msg)
		if err != nil {
			ev.out = append(ev.out[:0], errorEvent(&llm.Error{Kind: llm.Unavailable, Type: "server_error", Code: "upstream_bad_event",
				Message: "The upstream sent an event that is not JSON; it was dropped."}))
		}
		for _, b := range ev.out {
			if err := s.c.Write(ctx, websocket.MessageText, b); err != nil {
				return websocket.StatusGoingAway, "", nil // the client is gone: the reader says how
			}
		}
		if ev.created {
			s.began = time.Now()
			s.setBusy(true)
		}
		if ev.usage == nil {
			continue
		}
		s.out.Turns++
		s.out.Usage = s.out.Usage.Plus(*ev.usage)
		t := Turn{Usage: *ev.usage, Start: s.began, End: time.Now()}
		s.began = time.Time{}
		if s.o.Turn != nil {
			if err := s.o.Turn(ctx, t); err != nil {
				_ = s.c.Write(ctx, websocket.MessageText, errorEvent(err))
				return websocket.StatusPolicyViolation, closeReason(llm.Public(err).Code), err
			}
		}
		if s.setBusy(false) { // a shutdown waited for this response
			return websocket.StatusGoingAway, errDrained.Error(), nil
		}
	}
}

// setBusy records whether a response is under way, and reports whether the session is
// draining.
func (s *session) setBusy(busy bool) (draining bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy = busy
	return s.draining
}

// watchDrain ends the upstream's reads (by cancel) once Options.Drain is done: at once
// between responses, else after DrainTimeout unless relay ends the session first, as the
// response under way is done. It runs on callbacks, no goroutine; stop ends the watch.
func (s *session) watchDrain(cancel context.CancelCauseFunc) (stop func()) {
	if s.o.Drain == nil {
		return func() {}
	}
	var t *time.Timer // the drain's timeout, guarded by s.mu
	stopped := false
	unwatch := context.AfterFunc(s.o.Drain, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if stopped {
			return
		}
		s.draining = true
		if s.busy && s.o.DrainTimeout > 0 {
			t = time.AfterFunc(s.o.DrainTimeout, func() { cancel(errDrained) })
			return
		}
		cancel(errDrained)
	})
	return func() {
		unwatch()
		s.mu.Lock()
		defer s.mu.Unlock()
		stopped = true
		if t != nil {
			t.Stop()
		}
	}
}

// upstreamClose is the client's close once the upstream's Read failed with err: the
// upstream's own close when it sent one, a normal close at its EOF, else 1011.
func upstreamClose(ctx context.Context, err error) (websocket.StatusCode, string, error) {
	if context.Cause(ctx) == errDrained {
		return websocket.StatusGoingAway, errDrained.Error(), nil
	}
	if ctx.Err() != nil {
		return websocket.StatusNormalClosure, "", nil // the client ended it
	}
	var ce websocket.CloseError
	switch {
	case errors.Is(err, io.EOF), errors.As(err, &ce) && ce.Code == websocket.StatusNormalClosure:
		return websocket.StatusNormalClosure, "upstream closed the session", nil
	case errors.As(err, &ce) && ce.Code >= 3000 && ce.Code < 5000, errors.As(err, &ce) && ce.Code == websocket.StatusPolicyViolation:
		return ce.Code, closeReason(ce.Reason), &llm.Error{Kind: llm.Unavailable, Message: "upstream closed the session: " + ce.Reason}
	}
	return websocket.StatusInternalError, "upstream connection lost", &llm.Error{Kind: llm.Unavailable, Message: "upstream connection lost", Err: err}
}

// closeReason fits s in a close frame's reason (123 bytes).
func closeReason(s string) string {
	if len(s) > 123 {
		s = s[:123]
	}
	return s
}

// pinger pings the client every Ping; a ping unanswered within that time ends the session.
// It runs on a timer, no goroutine between pings; stop waits for a ping in flight.
func (s *session) pinger(ctx context.Context, cancel context.CancelCauseFunc) (stop func()) {
	every := time.Duration(orDefault(int64(s.o.Ping), int64(DefaultPing)))
	var mu sync.Mutex
	var wg sync.WaitGroup
	stopped := false
	var t *time.Timer
	t = time.AfterFunc(every, func() {
		mu.Lock()
		if stopped {
			mu.Unlock()
			return
		}
		wg.Add(1)
		mu.Unlock()
		defer wg.Done()
		pctx, done := context.WithTimeout(ctx, every)
		err := s.c.Ping(pctx)
		done()
		if err != nil {
			cancel(&llm.Error{Kind: llm.Canceled, Message: "the client did not answer a ping", Err: err})
			_ = s.c.CloseNow()
			return
		}
		t.Reset(every)
	})
	return func() {
		mu.Lock()
		stopped = true
		t.Stop()
		mu.Unlock()
		wg.Wait()
	}
}
