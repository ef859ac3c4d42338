package sse

import (
	"net/http"
	"strings"
	"sync"
	"time"
)

// WriterOptions are what a Writer needs beyond the ResponseWriter.
type WriterOptions struct {
	// Heartbeat is how long the stream may stay silent before a ": keepalive" comment (0:
	// never).
	Heartbeat time.Duration
	// WriteTimeout cuts a client that stops reading (0: never).
	WriteTimeout time.Duration
	// Trailers are the headers that Start sets but a keepalive cannot know yet: when a
	// keepalive sends the headers first, they are declared as trailers and sent after the
	// body.
	Trailers []string
	// Keepalive is the heartbeat frame; nil means the ": keepalive" comment. A wire whose
	// clients expect an event of their own (Anthropic's event: ping) sets it.
	Keepalive []byte
	// ContentType is the stream's media type; "" means text/event-stream. A stream that is
	// not SSE (Gemini's JSON array, written element by element) names its own.
	ContentType string
}

// Writer writes SSE frames to one client and flushes each, so every event leaves at once
// (DESIGN §5). In batch mode (a relayed round) it flushes instead when the upstream stream is
// about to be waited for, and at close: the events that came in one read leave in one write,
// as a reverse proxy sends them, and none is kept while the gateway waits. It owns one timer:
// whenever nothing was written for the heartbeat interval it writes ": keepalive", for the
// stream's whole life, including while the caller holds back before commit; the first
// keepalive also sends the headers, with the options' Trailers declared as trailers since
// they are not known yet. The timer's callback is the only other goroutine that writes; mu
// orders the two. Close stops it: nothing is written after.
type Writer struct {
	mu       sync.Mutex
	w        http.ResponseWriter
	rc       *http.ResponseController
	interval time.Duration
	trailers []string
	beatMsg  []byte
	ctype    string
	timer    *time.Timer
	started  bool // the headers left
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

// NewWriter starts the heartbeat of a stream to w; nothing is written until a keepalive,
// Start or Frame.
func NewWriter(w http.ResponseWriter, o WriterOptions) *Writer {
	ew := &Writer{w: w, rc: http.NewResponseController(w), interval: o.Heartbeat, trailers: o.Trailers,
		writeTimeout: o.WriteTimeout, beatMsg: o.Keepalive, ctype: o.ContentType}
	if ew.beatMsg == nil {
		ew.beatMsg = keepalive
	}
	if o.Heartbeat > 0 {
		// Under mu: the callback reads ew.timer, and may fire before this returns.
		ew.mu.Lock()
		ew.timer = time.AfterFunc(o.Heartbeat, ew.beat)
		ew.mu.Unlock()
	}
	return ew
}

// Headers sets the headers of every event stream.
func Headers(h http.Header) {
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
}

// headers sets the headers of this stream: an event stream's, with its own media type.
func (ew *Writer) headers(h http.Header) {
	Headers(h)
	if ew.ctype != "" {
		h.Set("Content-Type", ew.ctype)
	}
}

func (ew *Writer) beat() {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	if ew.closed || ew.err != nil {
		return
	}
	if !ew.started {
		h := ew.w.Header()
		ew.headers(h)
		h.Set("Trailer", strings.Join(ew.trailers, ", "))
		for _, t := range ew.trailers {
			h.Del(t)
		}
		ew.started = true
		ew.w.WriteHeader(http.StatusOK)
	}
	ew.write(ew.beatMsg)
	ew.flush()
	ew.timer.Reset(ew.interval)
}

// Start sends the headers at commit (in batch mode, with the first frames) unless a keepalive
// already did; setHeaders sets the headers known at commit, or, when the headers left early,
// the declared trailers.
func (ew *Writer) Start(setHeaders func(http.Header)) error {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	if ew.started {
		setHeaders(ew.w.Header()) // declared trailers: sent after the body
		return ew.err
	}
	ew.started = true
	h := ew.w.Header()
	ew.headers(h)
	setHeaders(h)
	ew.w.WriteHeader(http.StatusOK)
	ew.written()
	return ew.err
}

// Begin is Start for a caller that sets the headers through the response the writer writes
// (turn, which knows no HTTP): set runs under the writer's lock, as setHeaders does.
func (ew *Writer) Begin(set func()) error { return ew.Start(func(http.Header) { set() }) }

// Failed reports whether writing to the client failed: it stopped reading or left.
func (ew *Writer) Failed() bool {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	return ew.err != nil
}

// Begun reports whether the headers left, so an error must go in-band.
func (ew *Writer) Begun() bool {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	return ew.started
}

// Quiet stops the heartbeat unless the headers have left, and reports whether they had. It
// decides under the writer's lock, so no keepalive can start the stream between the check
// and a plain HTTP answer.
func (ew *Writer) Quiet() (begun bool) {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	if !ew.started {
		ew.closed = true
		if ew.timer != nil {
			ew.timer.Stop()
		}
	}
	return ew.started
}

// Frame writes b (a complete frame, blank line included) and flushes it.
func (ew *Writer) Frame(b []byte) error {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	ew.write(b)
	ew.written()
	if ew.timer != nil && ew.err == nil {
		ew.timer.Reset(ew.interval)
	}
	return ew.err
}

// Batching switches to batch mode: from now on the caller calls Release before anything
// that may wait, and Close flushes what is left.
func (ew *Writer) Batching() {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	ew.batch = true
}

// Release flushes what was written since the last flush.
func (ew *Writer) Release() {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	ew.flushDirty()
}

func (ew *Writer) flushDirty() {
	if ew.dirty {
		ew.flush()
	}
}

// written flushes what was just written, or in batch mode leaves it to Release.
func (ew *Writer) written() {
	if ew.batch {
		ew.dirty = true
		return
	}
	ew.flush()
}

func (ew *Writer) write(b []byte) {
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

func (ew *Writer) flush() {
	ew.dirty = false
	if ew.err != nil {
		return
	}
	if err := ew.rc.Flush(); err != nil {
		ew.err = err
	}
}

// Close flushes what batch mode left and stops the heartbeat; nothing is written after it.
func (ew *Writer) Close() {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	ew.flushDirty()
	ew.closed = true
	if ew.timer != nil {
		ew.timer.Stop()
	}
}
