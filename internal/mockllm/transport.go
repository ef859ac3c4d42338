package mockllm

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// Transport returns a RoundTripper that serves every request in-process, whatever its host,
// with no socket. Each RoundTrip runs ServeHTTP on its own goroutine writing into a pipe and
// returns once the handler has written its headers; the body then streams with no buffer.
// Canceling the request's context ends the handler's context and fails the body's reads;
// closing the body does the same and waits for the handler to return, so no goroutine
// outlives it.
func (s *Server) Transport() http.RoundTripper { return transport{s} }

type transport struct{ h http.Handler }

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	sreq := req.Clone(ctx)
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	sreq.RequestURI = req.URL.RequestURI()
	sreq.RemoteAddr = "127.0.0.1:0"
	if sreq.Host == "" {
		sreq.Host = req.URL.Host
	}
	pr, pw := io.Pipe()
	rw := &pipeWriter{ctx: ctx, header: http.Header{}, pw: pw, ready: make(chan struct{})}
	// The client leaving fails its reads with the context's error and the handler's writes.
	stop := context.AfterFunc(ctx, func() { pw.CloseWithError(ctx.Err()) })
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := t.serve(rw, sreq)
		stop()
		if err == nil {
			err = ctx.Err() // the client left: its reads fail, even if the AfterFunc has not run yet
		}
		rw.WriteHeader(http.StatusOK) // no-op if the handler wrote its own
		pw.CloseWithError(err)        // nil: the reader sees io.EOF
		sreq.Body.Close()
		cancel() // as net/http does when ServeHTTP returns
	}()
	select {
	case <-rw.ready:
		if rw.late {
			// The headers were written after the client left (by the handler, or by the
			// goroutine above once the handler returned): a client whose context ends before
			// the headers gets its context's error, as with net/http, whichever case the
			// select happened to pick.
			<-done
			return nil, ctx.Err()
		}
	case <-ctx.Done():
		cancel()
		<-done
		return nil, ctx.Err()
	}
	resp := &http.Response{
		Status:        fmt.Sprintf("%d %s", rw.status, http.StatusText(rw.status)),
		StatusCode:    rw.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rw.snapshot,
		Body:          &pipeBody{pr: pr, cancel: cancel, done: done},
		ContentLength: -1,
		Request:       req,
	}
	if n, err := strconv.ParseInt(rw.snapshot.Get("Content-Length"), 10, 64); err == nil {
		resp.ContentLength = n
	}
	return resp, nil
}

// serve runs the handler, turning a panic into a body that ends in io.ErrUnexpectedEOF, as a
// connection cut by net/http looks to a client.
func (t transport) serve(w http.ResponseWriter, r *http.Request) (err error) {
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				if s, ok := t.h.(*Server); ok {
					s.logf("mockllm: handler panic: %v", v)
				}
			}
			err = io.ErrUnexpectedEOF
		}
	}()
	t.h.ServeHTTP(w, r)
	return nil
}

// pipeWriter is the handler's ResponseWriter. Only the handler goroutine calls it; ready is
// closed when the status, header snapshot and late are set.
type pipeWriter struct {
	ctx      context.Context
	header   http.Header
	pw       *io.PipeWriter
	status   int
	snapshot http.Header
	late     bool // the headers were written after ctx ended
	ready    chan struct{}
}

func (p *pipeWriter) Header() http.Header { return p.header }

func (p *pipeWriter) WriteHeader(code int) {
	if p.snapshot != nil || code < 200 {
		return
	}
	p.status, p.snapshot = code, p.header.Clone()
	p.late = p.ctx.Err() != nil
	close(p.ready)
}

func (p *pipeWriter) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	return p.pw.Write(b)
}

// FlushError sends the headers if not yet sent; the pipe holds no data to flush.
func (p *pipeWriter) FlushError() error {
	p.WriteHeader(http.StatusOK)
	return p.ctx.Err()
}

func (p *pipeWriter) Flush() { p.FlushError() }

// pipeBody is the response body. Close ends the handler and waits for it.
type pipeBody struct {
	pr     *io.PipeReader
	cancel context.CancelFunc
	done   chan struct{}
}

func (b *pipeBody) Read(p []byte) (int, error) { return b.pr.Read(p) }

func (b *pipeBody) Close() error {
	b.pr.Close()
	b.cancel()
	<-b.done
	return nil
}
