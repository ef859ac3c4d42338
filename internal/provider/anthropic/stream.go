package anthropic

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"io"

	"github.com/r3labs/sse/v2"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
)

// stream is a Messages answer as an llm.Stream. Not safe for concurrent use, except Close,
// which unblocks a Recv in progress by closing the body.
type stream struct {
	// Body tells a client that left or a chain timeout from an upstream failure when a read
	// fails: the transport's error does not say, and r3labs reports a cancellation as io.EOF.
	transport.Body
	name string
	src  *endReader
	rd   *sse.EventStreamReader

	msg message
	q   transport.Queue // events of the current wire event; the error is io.EOF after message_stop
}

func newStream(ctx context.Context, o origin, body io.ReadCloser) *stream {
	src := newEndReader(body)
	return &stream{Body: transport.NewBody(ctx, o.name, body), name: o.name, src: src,
		rd: sse.NewEventStreamReader(src, maxEvent), msg: message{origin: o}}
}

// Recv returns the next event. io.EOF means the answer is complete: message_stop came (what
// follows it is not read). A stream that ends or is cut before that, or whose last event
// lacks its blank line, ends with a Truncated *llm.Error; an error event is Unavailable,
// RateLimited or Auth (streamError); an event whose data is not JSON is Unavailable, since
// the upstream is not speaking the protocol. If ctx was canceled or the stream closed, the
// error is Canceled (or Timeout), whatever the read saw. Errors are sticky.
func (s *stream) Recv() (llm.Event, error) { return s.q.Recv(s) }

// BeforeWait implements llm.Waiter: f runs before each read of the body, and before the
// drain that follows message_stop.
func (s *stream) BeforeWait(f func()) {
	s.OnWait(f)
	s.src.wait = f
}

var _ llm.Waiter = (*stream)(nil)

// Fill implements transport.Source: it reads one SSE event and queues its llm.Events, or
// returns the error that ends the stream (io.EOF once message_stop came).
func (s *stream) Fill() error {
	raw, err := s.rd.ReadEvent()
	if err != nil {
		return s.endError(err)
	}
	if s.src.isCut(raw) {
		// DESIGN §10: r3labs returns the bytes after the last blank line as an event.
		if e := s.Stopped(); e != nil {
			return e
		}
		return &llm.Error{Kind: llm.Truncated, Message: s.name + ": stream cut inside its last event"}
	}
	typ, data := parseEvent(raw)
	if err := s.msg.event(&s.q, typ, data); err != nil {
		return err
	}
	if s.msg.stopped {
		return io.EOF
	}
	return nil
}

// endError maps the error that ended the reader. r3labs says io.EOF for a clean end and for
// a context.Canceled read alike, so the caller's context and the body's own ending, kept by
// endReader, decide.
func (s *stream) endError(err error) error {
	if e := s.Stopped(); e != nil {
		return e
	}
	if errors.Is(err, bufio.ErrTooLong) {
		return &llm.Error{Kind: llm.Unavailable, Message: s.name + ": event over the size limit", Err: err}
	}
	if end := s.src.end; end != nil && end != io.EOF {
		// The connection broke mid-answer.
		return &llm.Error{Kind: llm.Truncated, Message: s.name + ": stream read failed: " + end.Error(), Err: end}
	}
	if err != io.EOF {
		return &llm.Error{Kind: llm.Truncated, Message: s.name + ": stream read failed: " + err.Error(), Err: err}
	}
	return &llm.Error{Kind: llm.Truncated, Message: s.name + ": stream ended before message_stop"}
}

// endReader passes the body through and remembers how it ended. When the body's last bytes
// are not a blank line, it appends a marker no upstream can forge (a NUL and a random
// token; it has no line end, so it cannot complete the event): the last event r3labs then
// returns ends with the marker, and the stream knows it was cut. Without this, a last event
// cut before its blank line would look complete.
type endReader struct {
	r      io.Reader
	tail   [3]byte // the last bytes read, tail[3-n:]
	n      int
	end    error  // what ended r (io.EOF for a clean end), nil while it lasts
	marker []byte // the marker, set when the body ended inside an event
	out    []byte // marker bytes not yet handed to the reader
	wait   func() // run before each read of r; nil: none
}

func newEndReader(r io.Reader) *endReader { return &endReader{r: r} }

func (e *endReader) Read(p []byte) (int, error) {
	if e.end != nil {
		if len(e.out) > 0 {
			n := copy(p, e.out)
			e.out = e.out[n:]
			return n, nil
		}
		return 0, e.end
	}
	if e.wait != nil {
		e.wait()
	}
	n, err := e.r.Read(p)
	e.keepTail(p[:n])
	if err != nil {
		e.end = err
		if e.n > 0 && !e.blankEnd() {
			e.marker = []byte("\x00cut-" + rand.Text())
			e.out = e.marker
		}
		if n == 0 {
			return e.Read(p)
		}
	}
	return n, nil
}

func (e *endReader) keepTail(b []byte) {
	if len(b) >= 3 {
		copy(e.tail[:], b[len(b)-3:])
		e.n = 3
		return
	}
	for _, c := range b {
		e.tail[0], e.tail[1], e.tail[2] = e.tail[1], e.tail[2], c
		e.n = min(e.n+1, 3)
	}
}

// blankEnd reports whether the body ended with a blank line, as r3labs splits events: LF LF,
// CR CR, or LF CR LF (which ends CRLF CRLF too).
func (e *endReader) blankEnd() bool {
	t := e.tail[3-e.n:]
	n := len(t)
	return n >= 2 && (t[n-2] == '\n' && t[n-1] == '\n' || t[n-2] == '\r' && t[n-1] == '\r') ||
		n == 3 && t[0] == '\n' && t[1] == '\r' && t[2] == '\n'
}

// isCut reports whether raw, an event r3labs returned, is the body's unterminated tail.
func (e *endReader) isCut(raw []byte) bool {
	return e.marker != nil && len(raw) >= len(e.marker) && string(raw[len(raw)-len(e.marker):]) == string(e.marker)
}
