// Package presence tells the HTTP edge when a request's client has left, as opposed to
// half-closed its connection: the handlers of a request run on the context Watch returns.
//
// A client that half-closes its connection after a complete request (shutdown(SHUT_WR), as
// `nc -N` and some proxies and load balancers do) still reads the answer; one that closes it
// has left. net/http cannot tell them apart: both are an EOF on the read side, and it cancels
// the request's context at either (golang/go#18527), so a half-closing client got an empty
// 200 while the log said 499. Only a write tells them apart: a closed socket answers it with
// a reset. So the handlers run on a context of their own, which presence cancels when the
// client has left for sure: a reset, a closed connection, or a reset after the probe that
// presence writes at the EOF (an interim "100 Continue", which every HTTP/1.1 client must
// accept before the final answer, RFC 9110 §15.2) when nothing of the answer was written yet;
// after that, the answer's own writes (a stream's events and keepalives) are the probes. A
// client that half-closes and only later leaves is seen at the next write. The socket's state
// comes from TCP_INFO (Linux); elsewhere, and for HTTP/2, an EOF is a departure, as in
// net/http.
package presence

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// ConnContext is the http.Server hook (http.Server.ConnContext) that gives the server the
// connection of each request, so that it can tell a half-closed connection from a client
// that left (presence). Without it, an EOF on the read side counts as a departure, as in
// net/http.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

type connKey struct{}

// errClientLeft is the cause of a handler context whose client left.
var errClientLeft = errors.New("client went away")

// probe is what presence writes to a half-closed connection before the answer.
var probe = []byte("HTTP/1.1 100 Continue\r\n\r\n")

// peerState is what a socket says of its client.
type peerState int

const (
	peerOpen       peerState = iota // no end of input seen
	peerHalfClosed                  // its input ended (FIN): it half-closed, or closed and a write will tell
	peerGone                        // reset, or closed here: it left
)

// pollEvery is how often presence looks at the socket of a half-closed connection.
const pollEvery = 100 * time.Millisecond

// presence watches the client of one request. Its writer is the request's ResponseWriter:
// it keeps the probe from going out once the answer started. Safe for concurrent use; stop
// ends it before the handler returns.
type presence struct {
	cancel    context.CancelCauseFunc
	stopWatch func() bool // stops watching net/http's context
	conn      net.Conn    // nil: unknown, an EOF is a departure
	sock      peerSocket
	probes    bool // HTTP/1.1: an interim response may go before the answer

	wmu     sync.Mutex  // held by the probe and by the write that starts the answer
	started atomic.Bool // the answer started: no probe may go before it

	mu    sync.Mutex // guards what follows
	done  bool
	timer *time.Timer
}

// Watch returns the context the request's handlers run on, ended when its client left, the
// writer they write the answer through, and stop, to call once the handler is done.
func Watch(r *http.Request, w http.ResponseWriter) (context.Context, http.ResponseWriter, func()) {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	p := &presence{cancel: cancel}
	if c, ok := r.Context().Value(connKey{}).(net.Conn); ok && r.ProtoMajor == 1 {
		if p.sock = socketOf(c); p.sock != nil {
			p.conn, p.probes = c, r.ProtoAtLeast(1, 1)
		}
	}
	p.stopWatch = context.AfterFunc(r.Context(), p.readEnded)
	return ctx, &presenceWriter{ResponseWriter: w, p: p}, p.stop
}

// readEnded runs when net/http ended the request's context: the connection's read side
// ended (EOF or an error), or a write failed.
func (p *presence) readEnded() {
	if p.conn == nil {
		p.cancel(errClientLeft)
		return
	}
	st := p.sock.state()
	if st == peerGone {
		p.cancel(errClientLeft)
		return
	}
	// Only an end of input is probed: net/http also ends the context at a read error of
	// its own, such as the body's deadline (readBody).
	if st == peerHalfClosed && p.probes && !p.started.Load() {
		p.wmu.Lock()
		p.mu.Lock()
		live := !p.done
		p.mu.Unlock()
		var err error
		if live && !p.started.Load() {
			_, err = p.conn.Write(probe)
		}
		p.wmu.Unlock()
		if err != nil {
			p.cancel(errClientLeft)
			return
		}
	}
	p.mu.Lock()
	if !p.done {
		p.timer = time.AfterFunc(pollEvery, p.poll)
	}
	p.mu.Unlock()
}

// poll looks for the reset that a write to a closed connection brings back.
func (p *presence) poll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	if p.sock.state() == peerGone {
		p.cancel(errClientLeft)
		return
	}
	p.timer.Reset(pollEvery)
}

func (p *presence) stop() {
	p.stopWatch()
	p.wmu.Lock()
	p.mu.Lock()
	p.done = true
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Unlock()
	p.wmu.Unlock()
	p.cancel(context.Canceled)
}

// presenceWriter is the request's ResponseWriter while presence may probe: the first write
// excludes the probe and marks the answer started; once started, no probe can go (readEnded
// checks started under wmu), so later writes, a stream's every event, take no lock.
type presenceWriter struct {
	http.ResponseWriter
	p *presence
}

// start marks the answer started, excluding a probe being written.
func (w *presenceWriter) start() {
	if w.p.started.Load() {
		return
	}
	w.p.wmu.Lock()
	w.p.started.Store(true)
	w.p.wmu.Unlock()
}

func (w *presenceWriter) WriteHeader(code int) {
	w.start()
	w.ResponseWriter.WriteHeader(code)
}

func (w *presenceWriter) Write(b []byte) (int, error) {
	w.start()
	return w.ResponseWriter.Write(b)
}

func (w *presenceWriter) FlushError() error {
	w.start()
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection's deadlines.
func (w *presenceWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
