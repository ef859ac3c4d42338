package transport

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/sse"
)

// Body is the event-stream body of an answer as an adapter's stream holds it: it decides how
// the stream lets go of the connection (drained after a complete answer, so that the pool
// keeps it; closed after a failure or by Close) and what a failed read means when the caller
// had stopped. Its End is a Source's. Not safe for concurrent use, except Close.
type Body struct {
	// ctx is the call's context, kept only to tell a client that left or a chain timeout
	// from an upstream failure when a read fails: the transport's error does not say.
	ctx  context.Context
	name string
	rc   io.ReadCloser
	wait func() // see OnWait; nil: none

	once   sync.Once
	closed atomic.Bool
}

// NewBody holds rc, the body of provider name's answer to the call whose context is ctx.
func NewBody(ctx context.Context, name string, rc io.ReadCloser) Body {
	return Body{ctx: ctx, name: name, rc: rc}
}

// drainLimit and DrainWait bound the read of what follows a complete answer (the closing
// chunk), which keeps the connection for the next call.
const drainLimit = 4 << 10

// DrainWait is a variable only for the adapters' tests of connection reuse, which make it
// generous: under load, an upstream's pause after its last event can outlast 100 ms, and
// such a test would measure the scheduler rather than the drain.
var DrainWait = 100 * time.Millisecond

// OnWait makes f run before the drain that follows a complete answer. The adapter's
// BeforeWait (llm.Waiter) sets it, and its reader's hook for the reads of the body.
func (b *Body) OnWait(f func()) { b.wait = f }

// Close releases the connection and unblocks a Recv in progress. Safe to call more than
// once and concurrently with Recv.
func (b *Body) Close() error {
	b.closed.Store(true)
	b.close()
	return nil
}

func (b *Body) close() { b.once.Do(func() { b.rc.Close() }) }

// End implements Source: after a complete answer (io.EOF) nothing that follows matters, and
// reading the body's end, briefly and bounded (sse.Drain), keeps the connection for the next
// call; a failure closes the body.
func (b *Body) End(err error) {
	if err != io.EOF {
		b.close()
		return
	}
	if b.wait != nil {
		b.wait()
	}
	b.once.Do(func() { sse.Drain(b.rc, drainLimit, DrainWait) })
}

// Stopped is the error for a stream the caller stopped: its ctx's (llm.ContextError), or
// Canceled after Close; nil while neither. A read that failed then failed because of it.
func (b *Body) Stopped() error {
	if err := llm.ContextError(b.ctx); err != nil {
		return err
	}
	if b.closed.Load() {
		return &llm.Error{Kind: llm.Canceled, Message: b.name + ": stream closed"}
	}
	return nil
}

// MaxPlainBody bounds the answer of a non-streamed call (llm.Request.Plain): an answer of
// 128k tokens is well under it.
const MaxPlainBody = 32 << 20

// ReadAll reads the whole body of a non-streamed answer, at most MaxPlainBody bytes. A read
// that failed is the caller's stop (Stopped) when there was one, else Truncated: the
// connection broke mid-answer; a body over the bound is Unavailable.
func (b *Body) ReadAll() ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(b.rc, MaxPlainBody+1))
	if e := b.Stopped(); e != nil {
		return nil, e
	}
	if err != nil {
		return nil, &llm.Error{Kind: llm.Truncated, Message: b.name + ": answer read failed: " + err.Error(), Err: err}
	}
	if len(data) > MaxPlainBody {
		return nil, &llm.Error{Kind: llm.Unavailable, Message: fmt.Sprintf("%s: answer over the size limit (%d bytes)", b.name, MaxPlainBody)}
	}
	return data, nil
}

// Plain is the answer of a non-streamed call (llm.Request.Plain) as an llm.Stream: its first
// Recv reads the whole body (ReadAll) and decode queues on q the events a stream of the
// same answer carries, through the adapter's own stream code, so that the relay takes a
// plain answer as it takes a streamed one. decode's error ends the stream; nil means the
// answer is complete. Not safe for concurrent use, except Close.
type Plain struct {
	Body
	q      Queue
	decode func(data []byte, q *Queue) error
	read   bool
}

// NewPlain holds rc, the body of provider name's answer to the call whose context is ctx.
func NewPlain(ctx context.Context, name string, rc io.ReadCloser, decode func(data []byte, q *Queue) error) *Plain {
	return &Plain{Body: NewBody(ctx, name, rc), decode: decode}
}

// Recv implements llm.Stream.
func (p *Plain) Recv() (llm.Event, error) { return p.q.Recv(p) }

// BeforeWait implements llm.Waiter: f runs before the one read of the body.
func (p *Plain) BeforeWait(f func()) { p.OnWait(f) }

// Fill implements Source: the whole answer, and its end, at the first call.
func (p *Plain) Fill() error {
	if p.read {
		return io.EOF
	}
	p.read = true
	data, err := p.ReadAll()
	if err != nil {
		return err
	}
	if err := p.decode(data, &p.q); err != nil {
		return err
	}
	return io.EOF
}
