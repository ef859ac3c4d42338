// Package reqbody reads a request's body within a size and a time limit, for every route
// that takes one (the /v1 model calls, the admin API, the MCP gateway): a larger body is
// refused whatever its Content-Length said, and a client that sends it too slowly is cut,
// without bounding the response, which may stream for minutes.
package reqbody

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Read reads r's body up to max bytes: a larger one is a TooLarge error (413). The whole
// body must arrive within timeout, else an Invalid error with status 408; the deadline is on
// this request's connection (http.ResponseController), not the server's ReadTimeout, and it
// stays after a timeout (the rest of the body is not worth waiting for; Connection: close is
// set). A read that fails otherwise is Canceled: the client left. w is the request's writer.
func Read(w http.ResponseWriter, r *http.Request, max int64, timeout time.Duration) ([]byte, error) {
	if r.ContentLength > max {
		return nil, tooLarge()
	}
	rc := http.NewResponseController(w)
	timed := timeout > 0 && rc.SetReadDeadline(time.Now().Add(timeout)) == nil // not under a recorder
	body, err := readAll(http.MaxBytesReader(w, r.Body, max), r.ContentLength)
	if err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return nil, tooLarge()
		case errors.Is(err, os.ErrDeadlineExceeded):
			w.Header().Set("Connection", "close")
			return nil, timedOut(timeout)
		}
		return nil, &llm.Error{Kind: llm.Canceled, Message: "reading the request body failed", Err: err}
	}
	if timed {
		// net/http clears it once the body is read, but not when an earlier read (the key
		// check's) took the body and this one is of the copy it kept.
		_ = rc.SetReadDeadline(time.Time{})
	}
	return body, nil
}

// tooLarge is the error of a body over the limit.
func tooLarge() *llm.Error {
	return &llm.Error{Kind: llm.TooLarge, Code: "request_too_large", Type: "invalid_request_error",
		Message: "The request body is larger than the gateway's limit."}
}

// timedOut is the error of a body that did not arrive within timeout.
func timedOut(timeout time.Duration) *llm.Error {
	return &llm.Error{Kind: llm.Invalid, Status: http.StatusRequestTimeout, Code: "request_timeout",
		Type: "invalid_request_error", Message: "The request body did not arrive within " + timeout.String() +
			" (the gateway's limits.body_timeout)."}
}

// presize is the most readAll allocates ahead on the word of Content-Length: a client that
// announces megabytes and sends them slowly must not get them allocated at once.
const presize = 64 << 10

// readAll is io.ReadAll into a buffer of the size the request announced (one allocation
// instead of io.ReadAll's growth from 512 bytes), up to presize; a body that does not say,
// says wrong, or is larger grows as io.ReadAll's would.
func readAll(r io.Reader, size int64) ([]byte, error) {
	if size <= 0 {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, min(size, presize)+1) // +1: the read that sees the end needs room
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow as append does
		}
	}
}

// Stream is r's body for a reader that takes it as it comes (a multipart upload, spooled by
// its wire), within the same limits as Read: over max bytes a read fails with the TooLarge
// error (413), slower than timeout with the 408, a client that left with Canceled. The
// deadline is set at the first read, so a body never read costs nothing. w is the request's
// writer.
func Stream(w http.ResponseWriter, r *http.Request, max int64, timeout time.Duration) io.Reader {
	return &stream{w: w, r: r, max: max, timeout: timeout}
}

// stream is Stream's reader: not safe for concurrent use.
type stream struct {
	w            http.ResponseWriter
	r            *http.Request
	max          int64
	timeout      time.Duration
	body         io.Reader
	rc           *http.ResponseController
	timed, ended bool
}

func (s *stream) Read(p []byte) (int, error) {
	if s.body == nil {
		if s.r.ContentLength > s.max {
			return 0, tooLarge()
		}
		s.rc = http.NewResponseController(s.w)
		s.timed = s.timeout > 0 && s.rc.SetReadDeadline(time.Now().Add(s.timeout)) == nil
		s.body = http.MaxBytesReader(s.w, s.r.Body, s.max)
	}
	n, err := s.body.Read(p)
	if err == io.EOF && s.timed && !s.ended {
		s.ended = true
		_ = s.rc.SetReadDeadline(time.Time{})
	}
	if err != nil && err != io.EOF {
		err = s.failed(err)
	}
	return n, err
}

// failed is the error of a read of the body that failed with err, as Read's.
func (s *stream) failed(err error) error {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return tooLarge()
	case errors.Is(err, os.ErrDeadlineExceeded):
		s.w.Header().Set("Connection", "close")
		return timedOut(s.timeout)
	}
	return &llm.Error{Kind: llm.Canceled, Message: "reading the request body failed", Err: err}
}
