// Package sse decodes upstream text/event-stream bodies, pull-style, and decides one thing the
// usual decoders get wrong: whether the body ended cleanly between events or was cut inside
// one. A cut last event is reported as ErrCut, never as a complete event or a clean io.EOF.
// Its Writer is the other side: the client-facing stream, with heartbeats, batched flushes,
// per-write deadlines and trailers.
//
// Framing follows the WHATWG HTML "Server-sent events" parsing rules
// (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
// CRLF, LF or CR line ends, an optional leading BOM, ":" comments, "data" lines joined by LF,
// "event" and "id" fields, and dispatch on a blank line. "retry" and unknown fields are ignored.
package sse

import (
	"bytes"
	"errors"
	"io"
	"sync"
)

// DefaultMaxEvent is the event size limit used when NewReader is given a non-positive one.
const DefaultMaxEvent = 8 << 20

var (
	// ErrCut reports a body that ended inside an event: a field or a partial line came
	// after the last blank line. The incomplete event is not returned.
	ErrCut = errors.New("sse: stream ended inside an event")
	// ErrTooLarge reports a line or an event's data over the Reader's limit.
	ErrTooLarge = errors.New("sse: event too large")
)

// Event is one dispatched event.
type Event struct {
	// Type is the value of the last "event" field, "" when none came (WHATWG calls that
	// type "message"; the caller decides).
	Type string
	// Data is the "data" lines joined by LF. It aliases the Reader's buffer and is valid
	// only until the next call of Next: copy it to keep it.
	Data []byte
	// ID is the last event ID: it persists across events until an "id" field changes it.
	ID string
}

// Reader decodes events from an io.Reader. Not safe for concurrent use. Errors are sticky.
type Reader struct {
	src io.Reader
	max int

	// buf[r:w] is read but not yet consumed; buf[r:r+scanned] holds no line end.
	buf        []byte
	r, w       int
	scanned    int
	srcErr     error // the error that ended src, returned once buf is drained
	skipLF     bool  // the last line ended with CR: a following LF belongs to it
	bomChecked bool

	data    []byte // data buffer of the event being built
	hasData bool
	typ     string
	id      string
	pending bool // a field came since the last dispatch
	err     error

	beforeRead func()
	pooled     *buffers // where buf and data came from and return to on Release

	// wait is what src is read into while buf is back in its pool: a held stream waiting
	// for its next event keeps these bytes, not a line buffer (issue 51). A burst larger
	// than wait that came while the Reader waited takes a second read, BeforeRead first.
	wait [waitBuf]byte
}

// buffers are a Reader's line and data buffers, kept in bufPool between streams: a fresh
// 4 KiB line buffer, zeroed, for every upstream answer was a tenth of the gateway's
// allocations under load.
type buffers struct{ buf, data []byte }

var bufPool = sync.Pool{New: func() any { return new(buffers) }}

const (
	waitBuf   = 1024     // Reader.wait: most upstream events, and most bursts of them, fit
	lineBuf   = 4096     // the first line buffer
	maxPooled = 64 << 10 // larger buffers (a rare huge event) are left to the collector
)

// NewReader returns a Reader of src that refuses lines and events larger than maxEvent bytes
// (DefaultMaxEvent if maxEvent <= 0).
func NewReader(src io.Reader, maxEvent int) *Reader {
	if maxEvent <= 0 {
		maxEvent = DefaultMaxEvent
	}
	if maxEvent+2 < lineBuf {
		return &Reader{src: src, max: maxEvent, buf: make([]byte, maxEvent+2)}
	}
	p := bufPool.Get().(*buffers)
	if cap(p.buf) < lineBuf {
		p.buf = make([]byte, lineBuf)
	}
	return &Reader{src: src, max: maxEvent, buf: p.buf[:cap(p.buf)], data: p.data[:0], pooled: p}
}

// ErrReleased is what Next returns after Release.
var ErrReleased = errors.New("sse: reader released")

// Release hands the Reader's buffers back for another Reader to reuse: the caller is done
// with it and with every Event.Data it returned. Next then returns ErrReleased (or the
// error that ended the stream). Release must not run concurrently with Next.
func (r *Reader) Release() {
	if r.pooled == nil {
		return
	}
	r.giveBack(true)
	r.data, r.r, r.w, r.scanned = nil, 0, 0, 0
	if r.err == nil {
		r.err = ErrReleased
	}
}

// giveBack hands r's line buffer back to the pool, and its data buffer with data.
func (r *Reader) giveBack(data bool) {
	p := r.pooled
	p.buf, p.data = nil, nil
	if cap(r.buf) <= maxPooled {
		p.buf = r.buf[:0]
	}
	if data && cap(r.data) <= maxPooled {
		p.data = r.data[:0]
	}
	r.buf, r.pooled = nil, nil
	bufPool.Put(p)
}

// Buffered is how many bytes the Reader has read from src and not yet decoded.
func (r *Reader) Buffered() int { return r.w - r.r }

// BeforeRead makes f run before every read of src: the caller's last moment before Next may
// wait for the network.
func (r *Reader) BeforeRead(f func()) { r.beforeRead = f }

// Next returns the next event. At the end of src it returns io.EOF if the body ended
// between events, ErrCut if it ended inside one, or the error src returned. The error is
// sticky.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	for {
		line, err := r.readLine()
		if err != nil {
			if err == io.EOF && (r.pending || len(line) > 0 && line[0] != ':') {
				// A partial line, or fields not yet dispatched by a blank line. A
				// partial comment alone loses nothing.
				err = ErrCut
			}
			r.err = err
			return Event{}, err
		}
		if len(line) == 0 {
			if ev, ok := r.dispatch(); ok {
				return ev, nil
			}
			continue
		}
		if err := r.field(line); err != nil {
			r.err = err
			return Event{}, err
		}
	}
}

// dispatch ends the event being built; it reports false when it has no data (WHATWG: such
// an event is not dispatched, and its type is reset).
func (r *Reader) dispatch() (Event, bool) {
	r.pending = false
	typ := r.typ
	r.typ = ""
	if !r.hasData {
		return Event{}, false
	}
	r.hasData = false
	data := r.data
	r.data = r.data[:0]
	return Event{Type: typ, Data: data, ID: r.id}, true
}

func (r *Reader) field(line []byte) error {
	if line[0] == ':' {
		return nil // comment, e.g. a keep-alive
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) { // no allocation: the compiler recognises the conversion
	case "data":
		if len(r.data)+len(value)+1 > r.max {
			return ErrTooLarge
		}
		if r.hasData {
			r.data = append(r.data, '\n')
		}
		r.data = append(r.data, value...)
		r.hasData = true
	case "event":
		if string(value) != r.typ {
			r.typ = string(value)
		}
	case "id":
		if bytes.IndexByte(value, 0) >= 0 {
			return nil // WHATWG: an id with NUL is ignored
		}
		if string(value) != r.id {
			r.id = string(value)
		}
	default:
		return nil // retry and unknown fields
	}
	r.pending = true
	return nil
}

// readLine returns the next line without its end. The line aliases buf and is valid until
// the next call. At the end of src it returns the partial line, if any, with io.EOF (or the
// error of src).
func (r *Reader) readLine() ([]byte, error) {
	for {
		if r.skipLF {
			if r.r < r.w {
				if r.buf[r.r] == '\n' {
					r.r++
				}
				r.skipLF = false
			} else if r.srcErr != nil {
				r.skipLF = false
			}
		}
		if !r.bomChecked {
			// WHATWG: one leading U+FEFF is dropped. Wait only while what came could
			// still be its start.
			seg, bom := r.buf[r.r:r.w], []byte("\xEF\xBB\xBF")
			if bytes.HasPrefix(seg, bom) {
				r.r += 3
				r.bomChecked = true
			} else if len(seg) >= 3 || !bytes.HasPrefix(bom, seg) || r.srcErr != nil {
				r.bomChecked = true
			}
		}
		if !r.skipLF && r.bomChecked {
			seg := r.buf[r.r:r.w]
			if i := indexEOL(seg, r.scanned); i >= 0 {
				line := seg[:i]
				if len(line) > r.max {
					return nil, ErrTooLarge
				}
				r.r += i + 1
				r.scanned = 0
				if seg[i] == '\r' {
					r.skipLF = true
				}
				return line, nil
			}
			r.scanned = len(seg)
			if len(seg) > r.max {
				return nil, ErrTooLarge
			}
			if r.srcErr != nil {
				r.r = r.w
				r.scanned = 0
				return seg, r.srcErr
			}
		}
		r.fill()
	}
}

// indexEOL returns the index of the first CR or LF in b at or after from, or -1.
func indexEOL(b []byte, from int) int {
	b = b[from:]
	// IndexByte is vectorised; most streams use LF only, so look for LF first and then
	// for a CR before it.
	end := bytes.IndexByte(b, '\n')
	head := b
	if end >= 0 {
		head = b[:end]
	}
	if i := bytes.IndexByte(head, '\r'); i >= 0 {
		return from + i
	}
	if end >= 0 {
		return from + end
	}
	return -1
}

// fill reads once more from src, compacting or growing buf first. Compaction moves only the
// unconsumed partial line and growth doubles, so decoding is amortised linear.
func (r *Reader) fill() {
	if r.r > 0 {
		n := copy(r.buf, r.buf[r.r:r.w])
		r.r, r.w = 0, n
	}
	if r.w == len(r.buf) {
		nb := make([]byte, min(2*len(r.buf), r.max+2))
		if len(nb) <= len(r.buf) {
			nb = make([]byte, 2*len(r.buf)) // at the limit; readLine reports ErrTooLarge
		}
		copy(nb, r.buf[:r.w])
		r.buf = nb
	}
	if r.beforeRead != nil {
		r.beforeRead()
	}
	if r.w > 0 || r.pooled == nil {
		r.w += r.read(r.buf[r.w:])
		return
	}
	// Nothing is buffered: the read may wait for the network. Wait with the line buffer
	// back in the pool, reading into wait, and take a buffer again once bytes came.
	r.giveBack(false) // r keeps its data buffer: the event being built may be in it
	n := r.read(r.wait[:])
	p := bufPool.Get().(*buffers)
	if cap(p.buf) < lineBuf {
		p.buf = make([]byte, lineBuf)
	}
	r.buf, r.pooled = p.buf[:cap(p.buf)], p
	r.w = copy(r.buf, r.wait[:n])
}

// read reads once from src into b, retrying reads of nothing; it records the error that
// ended src in srcErr.
func (r *Reader) read(b []byte) int {
	for range 100 {
		n, err := r.src.Read(b)
		if err != nil {
			r.srcErr = err
			return n
		}
		if n > 0 {
			return n
		}
	}
	r.srcErr = io.ErrNoProgress
	return 0
}
