package mockllm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxBody is the largest request body the mock reads; larger ones answer 413.
const maxBody = 32 << 20

// Options configure a Server. The zero value is usable.
type Options struct {
	// FixturesDir holds the .sse files replay scripts name.
	FixturesDir string
	// Logf, if set, logs one line per request and handler panics.
	Logf func(format string, args ...any)
	// Now, if set, gives the "created" time of answers (default time.Now).
	Now func() time.Time
}

// Server is a scripted OpenAI Chat Completions upstream. It is safe for concurrent use; its
// counters live as long as it does.
type Server struct {
	opts Options

	mu       sync.Mutex
	seq      int64
	calls    map[string]int
	last     map[string][]byte
	canceled int
}

// New returns a Server; serve it with net/http or call it in-process through Transport.
func New(opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Server{opts: opts, calls: map[string]int{}, last: map[string][]byte{}}
}

// Calls reports how many chat requests named model (the exact string, options included).
func (s *Server) Calls(model string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[model]
}

// Canceled reports how many chat requests ended because their context ended (the client went
// away) before the script finished. A handler counts when it returns: after
// httptest.Server.Close, or after closing a Transport response body, the count is settled.
func (s *Server) Canceled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.canceled
}

// LastRequest returns a copy of the raw JSON body of the last chat request for model, or nil.
func (s *Server) LastRequest(model string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.last[model])
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// ServeHTTP answers POST .../chat/completions, GET .../models and GET .../models/{script}.
// Paths are matched by suffix so any base URL prefix works (/v1, /openai/deployments/x).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case strings.HasSuffix(p, "/chat/completions"):
		if r.Method != http.MethodPost {
			writeError(w, http.StatusMethodNotAllowed, newAPIError("invalid_request_error", "",
				fmt.Sprintf("Invalid method for URL (%s %s)", r.Method, p)), 0)
			return
		}
		s.chat(w, r)
	case strings.HasSuffix(p, "/models") && r.Method == http.MethodGet:
		var list struct {
			Object string        `json:"object"`
			Data   []modelObject `json:"data"`
		}
		list.Object = "list"
		for _, n := range scriptNames {
			list.Data = append(list.Data, modelObject{n, "model", 0, "mockllm"})
		}
		writeJSON(w, http.StatusOK, list)
	case strings.Contains(p, "/models/") && r.Method == http.MethodGet:
		id := p[strings.LastIndex(p, "/models/")+len("/models/"):]
		if _, err := parseScript(id); err != nil {
			writeError(w, http.StatusNotFound, notFound(id, err), 0)
			return
		}
		writeJSON(w, http.StatusOK, modelObject{id, "model", 0, "mockllm"})
	default:
		writeError(w, http.StatusNotFound, newAPIError("invalid_request_error", "",
			fmt.Sprintf("Invalid URL (%s %s)", r.Method, p)), 0)
	}
}

type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func notFound(model string, err error) apiError {
	return newAPIError("invalid_request_error", "model_not_found",
		fmt.Sprintf("The model `%s` does not exist or you do not have access to it. (mockllm: %v)", model, err))
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, newAPIError("invalid_request_error", "", "reading body: "+err.Error()), 0)
		return
	}
	if len(raw) > maxBody {
		writeError(w, http.StatusRequestEntityTooLarge, newAPIError("invalid_request_error", "request_too_large",
			"Request body too large."), 0)
		return
	}
	var req chatRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		writeError(w, http.StatusBadRequest, newAPIError("invalid_request_error", "",
			"We could not parse the JSON body of your request. ("+err.Error()+")"), 0)
		return
	}
	if req.Model == "" {
		writeError(w, http.StatusBadRequest, newAPIError("invalid_request_error", "",
			"you must provide a model parameter"), 0)
		return
	}
	s.mu.Lock()
	s.calls[req.Model]++
	call := s.calls[req.Model]
	s.last[req.Model] = raw
	s.seq++
	seq := s.seq
	s.mu.Unlock()

	sc, err := parseScript(req.Model)
	if err != nil {
		s.logf("mockllm: %s %q: 404 %v", r.URL.Path, req.Model, err)
		writeError(w, http.StatusNotFound, notFound(req.Model, err), 0)
		return
	}
	if sc.fail != "" && sc.times > 0 && call > sc.times {
		sc.fail, sc.status = "", 0 // the fault was for the first `times` calls only
	}
	s.logf("mockllm: %s %q stream=%v call=%d", r.URL.Path, req.Model, req.Stream, call)
	err = s.play(r.Context(), w, sc, &req, seq)
	if err != nil && !errors.Is(err, errAbort) {
		s.mu.Lock()
		s.canceled++
		s.mu.Unlock()
	}
	if errors.Is(err, errAbort) {
		panic(http.ErrAbortHandler) // the connection is cut without ending the body
	}
}

// errAbort asks chat to abort the connection.
var errAbort = errors.New("mockllm: abort")

// play runs a parsed script. A non-nil error other than errAbort means the client went away
// (the context ended or a write failed) before the script finished.
func (s *Server) play(ctx context.Context, w http.ResponseWriter, sc *script, req *chatRequest, seq int64) error {
	if err := sleep(ctx, sc.wait); err != nil {
		return err
	}
	if sc.status != 0 {
		writeError(w, sc.status, scriptedError(sc, req.Model), retryAfter(sc))
		return nil
	}
	if sc.name == "replay" {
		events, err := s.readFixture(sc.file)
		if err != nil {
			writeError(w, http.StatusNotFound, notFound(req.Model, err), 0)
			return nil
		}
		return stream(ctx, w, sc, nil, events)
	}
	a := newAnswer(sc, req, seq, s.opts.Now().Unix())
	if req.Stream {
		return stream(ctx, w, sc, a.preamble(), a.body())
	}
	return complete(ctx, w, sc, a)
}

// scriptedError is the error body of a fail= fault, OpenAI's shape and wording per status
// unless code=, type= or msg= say otherwise.
func scriptedError(sc *script, model string) apiError {
	typ, code, msg := "invalid_request_error", "", "mockllm: scripted error"
	switch st := sc.status; {
	case sc.fail == "ratelimit" || st == http.StatusTooManyRequests:
		typ, code, msg = "requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try again in 1s."
	case st == http.StatusUnauthorized:
		code, msg = "invalid_api_key", "Incorrect API key provided: sk-mock****. You can find your API key at https://platform.openai.com/account/api-keys."
	case st == http.StatusNotFound:
		code, msg = "model_not_found", fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model)
	case st == http.StatusRequestEntityTooLarge:
		code, msg = "request_too_large", "Request body too large."
	case st == http.StatusServiceUnavailable:
		typ, msg = "server_error", "The engine is currently overloaded, please try again later."
	case st >= 500 || st == 0:
		typ, msg = "server_error", "The server had an error while processing your request. Sorry about that!"
	}
	if sc.typ != "" {
		typ = sc.typ
	}
	if sc.code != "" {
		code = sc.code
	}
	if sc.msg != "" {
		msg = sc.msg
	}
	return newAPIError(typ, code, msg)
}

// retryAfter is the Retry-After seconds of a fault: retry= if given (0: no header), else 1
// for a 429.
func retryAfter(sc *script) int {
	if sc.retried {
		return sc.retry
	}
	if sc.status == http.StatusTooManyRequests || sc.fail == "ratelimit" {
		return 1
	}
	return 0
}

func writeError(w http.ResponseWriter, status int, e apiError, retryAfter int) {
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	writeJSON(w, status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b := append(marshal(v), '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b) // a client that left is the only failure, and it is not this caller's concern
}

// sleep waits d or until ctx ends, returning ctx's error then.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
