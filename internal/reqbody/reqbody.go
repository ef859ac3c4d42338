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
	tooLarge := &llm.Error{Kind: llm.TooLarge, Code: "request_too_large", Type: "invalid_request_error",
		Message: "The request body is larger than the gateway's limit."}
	if r.ContentLength > max {
		return nil, tooLarge
	}
	rc := http.NewResponseController(w)
	timed := timeout > 0 && rc.SetReadDeadline(time.Now().Add(timeout)) == nil // not under a recorder
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return nil, tooLarge
		case errors.Is(err, os.ErrDeadlineExceeded):
			w.Header().Set("Connection", "close")
			return nil, &llm.Error{Kind: llm.Invalid, Status: http.StatusRequestTimeout, Code: "request_timeout",
				Type: "invalid_request_error", Message: "The request body did not arrive within " + timeout.String() +
					" (the gateway's limits.body_timeout)."}
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
