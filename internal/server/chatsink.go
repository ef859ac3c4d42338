package server

import (
	"net/http"
	"sync"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// eventWriter writes SSE frames to one client and flushes each, so every event leaves at once
// (DESIGN §5). In batch mode (a relayed round) it flushes instead when the upstream stream is
// about to be waited for, and at close: the events that came in one read leave in one write,
// as a reverse proxy sends them, and none is kept while the gateway waits. It owns one timer:
// whenever nothing was written for the heartbeat interval it writes ": keepalive", for the
// stream's whole life, including while the chain holds back before commit; the first
// keepalive also sends the headers, with the served target and the attempts declared as
// trailers since they are not known yet. The timer's callback is the only other goroutine
// that writes; mu orders the two. Close stops it: nothing is written after.
type eventWriter struct {
	mu       sync.Mutex
	w        http.ResponseWriter
	rc       *http.ResponseController
	buf      []byte
	interval time.Duration
	timer    *time.Timer
	started  bool // the headers left
	early    bool // they left before commit: target and attempts go in trailers
	batch    bool // frames are flushed by release, not one by one
	dirty    bool // written, not yet flushed
	closed   bool
	err      error
	// A client that stops reading is cut after writeTimeout: a per-write deadline, renewed
	// when half of it is used, instead of a server-wide WriteTimeout that would kill streams.
	writeTimeout time.Duration
	deadline     time.Time
}

var keepalive = []byte(": keepalive\n\n")

func newEventWriter(w http.ResponseWriter, interval, writeTimeout time.Duration) *eventWriter {
	ew := &eventWriter{w: w, rc: http.NewResponseController(w), buf: make([]byte, 0, 512), interval: interval,
		writeTimeout: writeTimeout}
	if interval > 0 {
		// Under mu: the callback reads ew.timer, and may fire before this returns.
		ew.mu.Lock()
		ew.timer = time.AfterFunc(interval, ew.beat)
		ew.mu.Unlock()
	}
	return ew
}

// sseHeaders are the headers of every event stream.
func sseHeaders(h http.Header) {
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
}

func (ew *eventWriter) beat() {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	if ew.closed || ew.err != nil {
		return
	}
	if !ew.started {
		h := ew.w.Header()
		sseHeaders(h)
		h.Set("Trailer", "X-Sluice-Target, X-Sluice-Attempts")
		h.Del("X-Sluice-Target")
		h.Del("X-Sluice-Attempts")
		ew.started, ew.early = true, true
		ew.w.WriteHeader(http.StatusOK)
	}
	ew.write(keepalive)
	ew.flush()
	ew.timer.Reset(ew.interval)
}

// start sends the headers at commit (in batch mode, with the first frames) unless a keepalive
// already did; setHeaders sets the served target and attempts, as headers or, when the
// headers left early, as trailers.
func (ew *eventWriter) start(setHeaders func(http.Header)) error {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	if ew.started {
		setHeaders(ew.w.Header()) // declared trailers: sent after the body
		return ew.err
	}
	ew.started = true
	h := ew.w.Header()
	sseHeaders(h)
	setHeaders(h)
	ew.w.WriteHeader(http.StatusOK)
	ew.written()
	return ew.err
}

// failed reports whether writing to the client failed: it stopped reading or left.
func (ew *eventWriter) failed() bool {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	return ew.err != nil
}

// begun reports whether the headers left, so an error must go in-band.
func (ew *eventWriter) begun() bool {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	return ew.started
}

// frame writes b (a complete frame, blank line included) and flushes it.
func (ew *eventWriter) frame(b []byte) error {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	ew.write(b)
	ew.written()
	if ew.timer != nil && ew.err == nil {
		ew.timer.Reset(ew.interval)
	}
	return ew.err
}

// batching switches to batch mode: from now on the caller calls release before anything
// that may wait (llm.Waiter), and close flushes what is left.
func (ew *eventWriter) batching() {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	ew.batch = true
}

// release flushes what was written since the last flush.
func (ew *eventWriter) release() {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	ew.flushDirty()
}

func (ew *eventWriter) flushDirty() {
	if ew.dirty {
		ew.flush()
	}
}

// written flushes what was just written, or in batch mode leaves it to release.
func (ew *eventWriter) written() {
	if ew.batch {
		ew.dirty = true
		return
	}
	ew.flush()
}

func (ew *eventWriter) write(b []byte) {
	if ew.err != nil {
		return
	}
	if ew.writeTimeout > 0 {
		if now := time.Now(); ew.deadline.Sub(now) < ew.writeTimeout/2 {
			ew.deadline = now.Add(ew.writeTimeout)
			_ = ew.rc.SetWriteDeadline(ew.deadline) // not every writer supports it (tests)
		}
	}
	if _, err := ew.w.Write(b); err != nil {
		ew.err = err
	}
}

func (ew *eventWriter) flush() {
	ew.dirty = false
	if ew.err != nil {
		return
	}
	if err := ew.rc.Flush(); err != nil {
		ew.err = err
	}
}

// close flushes what batch mode left and stops the heartbeat; nothing is written after it.
func (ew *eventWriter) close() {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	ew.flushDirty()
	ew.closed = true
	if ew.timer != nil {
		ew.timer.Stop()
	}
}

// chatSink encodes released events as Chat Completions chunks. It is the relay.Sink of one
// streamed chat request; not safe for concurrent use.
type chatSink struct {
	ew           *eventWriter
	head         []byte
	includeUsage bool
	started      []bool
	logprobs     [][]byte // pending logprobs per choice, attached to its next chunk
	usage        *llm.Usage
}

func newChatSink(ew *eventWriter, id string, created int64, model string, includeUsage bool) *chatSink {
	return &chatSink{ew: ew, head: chunkHead(id, created, model), includeUsage: includeUsage}
}

func (s *chatSink) Event(ev *llm.Event) error {
	switch ev.Type {
	case llm.EvText, llm.EvRefusal, llm.EvReasoning:
		if ev.Text == "" {
			return nil // opaque reasoning content has no Chat Completions field
		}
	case llm.EvToolCall, llm.EvDone:
	case llm.EvLogprobs:
		for len(s.logprobs) <= ev.Choice {
			s.logprobs = append(s.logprobs, nil)
		}
		s.logprobs[ev.Choice] = mergeLogprobs(s.logprobs[ev.Choice], ev.Raw)
		return nil
	case llm.EvUsage:
		u := *ev.Usage
		s.usage = &u
		return nil
	default:
		return nil
	}
	b := s.ew.buf[:0]
	for len(s.started) <= ev.Choice {
		s.started = append(s.started, false)
	}
	if !s.started[ev.Choice] {
		s.started[ev.Choice] = true
		b = s.open(b)
		b = appendRole(b, ev.Choice, ev.Type == llm.EvToolCall || ev.Type == llm.EvRefusal)
		b = append(b, "]}\n\n"...)
	}
	var lp []byte
	if ev.Choice < len(s.logprobs) {
		lp, s.logprobs[ev.Choice] = s.logprobs[ev.Choice], nil
	}
	b = s.open(b)
	b = appendDelta(b, ev, lp)
	b = append(b, "]}\n\n"...)
	s.ew.buf = b
	return s.ew.frame(b)
}

func (s *chatSink) open(b []byte) []byte {
	b = append(b, "data: "...)
	return append(b, s.head...)
}

// end writes the usage chunk when the client asked for it, then [DONE].
func (s *chatSink) end(u *llm.Usage) error {
	b := s.ew.buf[:0]
	if s.includeUsage {
		b = s.open(b)
		b = append(b, `],"usage":`...)
		b = appendUsage(b, u)
		b = append(b, "}\n\n"...)
	}
	b = append(b, "data: [DONE]\n\n"...)
	s.ew.buf = b
	return s.ew.frame(b)
}

// inband is the in-band error frame: no event: line (the shape the OpenAI SDKs raise on), and
// no [DONE] after it, so no client mistakes a cut answer for a whole one.
func inband(body []byte) []byte {
	b := make([]byte, 0, len(body)+8)
	b = append(b, "data: "...)
	b = append(b, body...)
	return append(b, "\n\n"...)
}
