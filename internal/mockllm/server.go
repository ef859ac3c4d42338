package mockllm

import (
	"bytes"
	"context"
	"fmt"
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

// Server is a scripted LLM upstream speaking Chat Completions, Anthropic Messages, OpenAI
// Responses and embeddings. It is safe for concurrent use; its counters live as long as it
// does and count the requests of every endpoint.
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

// Calls reports how many requests named model (the exact string, options included), on any
// endpoint; requests refused before their model was read (bad JSON, Anthropic's missing
// headers) do not count.
func (s *Server) Calls(model string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[model]
}

// Canceled reports how many requests ended because their context ended (the client went
// away) before the script finished. A handler counts when it returns: after
// httptest.Server.Close, or after closing a Transport response body, the count is settled.
func (s *Server) Canceled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.canceled
}

// LastRequest returns a copy of the raw JSON body of the last request for model, on any
// endpoint, or nil.
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

// ServeHTTP answers POST .../chat/completions, .../messages (Anthropic) and
// .../messages/count_tokens, .../responses, .../models/{model}:generateContent and
// :streamGenerateContent?alt=sse (Gemini),
// .../embeddings, GET .../models and GET .../models/{script}. Paths are matched by suffix
// so any base URL prefix works (/v1, /openai/deployments/x).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if model, streamed, ok := geminiPath(r.URL); ok && r.Method == http.MethodPost {
		if streamed && r.URL.Query().Get("alt") != "sse" {
			writeJSON(w, http.StatusBadRequest, googleError(http.StatusBadRequest,
				"mockllm streams the Gemini API as SSE only: add ?alt=sse"))
			return
		}
		s.serve(w, r, geminiDialect{model: model, stream: streamed, keyed: r.URL.Query().Get("key") != ""})
		return
	}
	switch {
	case strings.HasSuffix(p, "/chat/completions"):
		s.serve(w, r, chatDialect{})
	case strings.HasSuffix(p, "/messages"):
		s.serve(w, r, anthropicDialect{})
	case strings.HasSuffix(p, "/messages/count_tokens"):
		s.countTokens(w, r)
	case strings.HasSuffix(p, "/responses"):
		s.serve(w, r, responsesDialect{})
	case strings.HasSuffix(p, "/embeddings"):
		s.serve(w, r, embeddingsDialect{})
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

func writeError(w http.ResponseWriter, status int, body any, retryAfter int) {
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	writeJSON(w, status, body)
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
