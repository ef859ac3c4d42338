package mockllm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// dialect is one wire format the mock speaks (Chat Completions, Anthropic Messages, OpenAI
// Responses, embeddings). A script runs the same way whatever the dialect: one answer, the
// same timing, the same faults at the same frame; the dialect only reads the request and
// writes the answer, the errors and the in-stream faults in its own shape. Implementations
// hold no state.
type dialect interface {
	// parse reads a request's headers and body; a non-nil error is answered at once.
	parse(h http.Header, raw []byte) (*request, *reqError)
	// serves says why a valid script does not run on this endpoint, or nil.
	serves(sc *script) error
	// frames is the streamed answer: the preamble, written at once, and the body frames
	// that first=, delay= and the in-stream faults apply to.
	frames(a *answer) (pre, body [][]byte)
	// whole is the body of the non-streamed answer.
	whole(a *answer) any
	// errorBody is the body of an error the mock answers itself (bad request, unknown
	// model), given in OpenAI's vocabulary and rewritten in the dialect's.
	errorBody(status int, e apiError) any
	// scripted is the status and body of a fail= HTTP error, or of a non-streamed request
	// whose script fails in-stream (fail=error, event or ratelimit).
	scripted(sc *script, model string) (int, any)
	// inband is what fail=error, event and ratelimit write in place of a stream's frame;
	// seq is the number of frames written before it.
	inband(a *answer, sc *script, seq int) [][]byte
	// last is the frame a fault past the end of an empty body stands in for (Chat: [DONE]).
	last() []byte
}

// reqError is a request the mock refuses before running its script.
type reqError struct {
	status int
	err    apiError
}

func badJSON(err error) *reqError {
	return &reqError{http.StatusBadRequest, newAPIError("invalid_request_error", "",
		"We could not parse the JSON body of your request. ("+err.Error()+")")}
}

// notEmbeddings keeps the embed script off the generating endpoints, as OpenAI refuses an
// embedding model on chat/completions.
func notEmbeddings(sc *script) error {
	if sc.name == "embed" {
		return errors.New("embed answers only POST .../embeddings")
	}
	return nil
}

// serve answers one request of dialect d: it reads and counts it, parses its script and
// plays it.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, d dialect) {
	fail := func(status int, e apiError) { writeError(w, status, d.errorBody(status, e), 0) }
	if r.Method != http.MethodPost {
		fail(http.StatusMethodNotAllowed, newAPIError("invalid_request_error", "",
			fmt.Sprintf("Invalid method for URL (%s %s)", r.Method, r.URL.Path)))
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		fail(http.StatusBadRequest, newAPIError("invalid_request_error", "", "reading body: "+err.Error()))
		return
	}
	if len(raw) > maxBody {
		fail(http.StatusRequestEntityTooLarge, newAPIError("invalid_request_error", "request_too_large",
			"Request body too large."))
		return
	}
	req, rerr := d.parse(r.Header, raw)
	if rerr != nil {
		fail(rerr.status, rerr.err)
		return
	}
	s.mu.Lock()
	s.calls[req.model]++
	call := s.calls[req.model]
	s.last[req.model] = raw
	s.seq++
	seq := s.seq
	s.mu.Unlock()

	sc, err := parseScript(req.model)
	if err == nil {
		err = d.serves(sc)
	}
	if err != nil {
		s.logf("mockllm: %s %q: 404 %v", r.URL.Path, req.model, err)
		fail(http.StatusNotFound, notFound(req.model, err))
		return
	}
	if sc.quote != "" {
		sc.msg = or(sc.msg, "mockllm: scripted error") + quoteRequest(r, sc.quote)
	}
	if sc.fail != "" && sc.times > 0 && call > sc.times {
		sc.fail, sc.status = "", 0 // the fault was for the first `times` calls only
	}
	s.logf("mockllm: %s %q stream=%v call=%d", r.URL.Path, req.model, req.stream, call)
	err = s.play(r.Context(), w, d, sc, req, seq)
	if err != nil && !errors.Is(err, errAbort) {
		s.mu.Lock()
		s.canceled++
		s.mu.Unlock()
	}
	if errors.Is(err, errAbort) {
		panic(http.ErrAbortHandler) // the connection is cut without ending the body
	}
}

// errAbort asks serve to abort the connection.
var errAbort = errors.New("mockllm: abort")

// play runs a parsed script. A non-nil error other than errAbort means the client went away
// (the context ended or a write failed) before the script finished.
func (s *Server) play(ctx context.Context, w http.ResponseWriter, d dialect, sc *script, req *request, seq int64) error {
	if err := sleep(ctx, sc.wait); err != nil {
		return err
	}
	if sc.status != 0 {
		status, body := d.scripted(sc, req.model)
		writeError(w, status, body, retryAfter(sc))
		return nil
	}
	a := newAnswer(sc, req, seq, s.opts.Now().Unix())
	if sc.name == "replay" {
		events, err := s.readFixture(sc.file)
		if err != nil {
			writeError(w, http.StatusNotFound, d.errorBody(http.StatusNotFound, notFound(req.model, err)), 0)
			return nil
		}
		return stream(ctx, w, d, a, nil, events)
	}
	if req.stream {
		pre, body := d.frames(a)
		return stream(ctx, w, d, a, pre, body)
	}
	return complete(ctx, w, d, a)
}

// eventFrame is one SSE event named name carrying v as JSON, as Anthropic and the Responses
// API send them.
func eventFrame(name string, v any) []byte {
	b := append([]byte("event: "+name+"\ndata: "), marshal(v)...)
	return append(b, "\n\n"...)
}

// rawOr is a JSON value given as is, or def when absent or null.
func rawOr(v json.RawMessage, def string) json.RawMessage {
	if len(v) == 0 || string(v) == "null" {
		return json.RawMessage(def)
	}
	return v
}

// or is s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// quoteRequest is what an upstream that echoes the request writes in its error: every header
// (sorted) and the query, whole (mode all), or each as OpenAI quotes a key, its first 12 and
// last 4 characters around asterisks, the auth scheme left out (mode masked).
func quoteRequest(r *http.Request, mode string) string {
	show := func(v string) string {
		if mode == "all" {
			return v
		}
		if _, tok, ok := strings.Cut(v, " "); ok && strings.EqualFold(v[:len(v)-len(tok)-1], "bearer") {
			v = tok
		}
		if len(v) <= 16 {
			return v
		}
		return v[:12] + "****" + v[len(v)-4:]
	}
	var b strings.Builder
	b.WriteString(" (the request carried")
	for _, k := range slices.Sorted(maps.Keys(r.Header)) {
		for _, v := range r.Header[k] {
			fmt.Fprintf(&b, " %s: %s;", k, show(v))
		}
	}
	if r.URL.RawQuery != "" {
		fmt.Fprintf(&b, " query: %s;", show(r.URL.RawQuery))
	}
	return b.String() + ")"
}
