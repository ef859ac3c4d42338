package openai

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
	"github.com/sluice-gw/sluice/internal/provider/transport"
)

func TestStatusErrors(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		header     map[string]string
		body       string
		kind       llm.Kind
		message    string // exact, when set
		code       string
		param      string
		retryAfter time.Duration
	}{
		{name: "400 keeps message", status: 400, kind: llm.Invalid,
			body:    `{"error":{"message":"Invalid value for 'temperature'.","type":"invalid_request_error","param":"temperature","code":"invalid_value"}}`,
			message: "Invalid value for 'temperature'.", code: "invalid_value", param: "temperature"},
		{name: "404", status: 404, kind: llm.Invalid, body: `{"error":{"message":"The model 'x' does not exist","code":"model_not_found"}}`,
			message: "The model 'x' does not exist", code: "model_not_found"},
		{name: "413 plain text", status: 413, kind: llm.Invalid, body: "request too large\n", message: "request too large"},
		{name: "422 detail", status: 422, kind: llm.Invalid, body: `{"detail":"messages: field required"}`, message: "messages: field required"},
		{name: "401", status: 401, kind: llm.Auth,
			body: `{"error":{"message":"Incorrect API key provided: ` + testKey + `. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","code":"invalid_api_key"}}`, code: "invalid_api_key"},
		{name: "403", status: 403, kind: llm.Auth, body: `{"error":{"message":"key ` + testKey + ` lacks scope"}}`},
		{name: "408", status: 408, kind: llm.Unavailable, body: ""},
		{name: "409", status: 409, kind: llm.Unavailable, body: `{"error":{"message":"conflict"}}`},
		{name: "429 retry-after seconds", status: 429, kind: llm.RateLimited, header: map[string]string{"Retry-After": "7"},
			body: `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, code: "rate_limit_exceeded", retryAfter: 7 * time.Second},
		{name: "429 retry-after-ms wins", status: 429, kind: llm.RateLimited, header: map[string]string{"Retry-After": "7", "Retry-After-Ms": "1500"},
			body: `{}`, retryAfter: 1500 * time.Millisecond},
		{name: "500", status: 500, kind: llm.Unavailable, body: `{"error":{"message":"The server had an error","type":"server_error","code":null}}`},
		{name: "502 html", status: 502, kind: llm.Unavailable, body: "<html>bad gateway</html>"},
		{name: "503", status: 503, kind: llm.Unavailable, body: `{"error":{"message":"overloaded","code":503}}`, code: "503"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			})
			s, err := u.client(Config{}).Stream(context.Background(), testRequest())
			if s != nil {
				s.Close()
				t.Fatalf("got a stream, want an error")
			}
			le := wantKind(t, err, tt.kind)
			if le.Status != tt.status {
				t.Errorf("status: got %d, want %d", le.Status, tt.status)
			}
			if tt.message != "" && le.Message != tt.message {
				t.Errorf("message: got %q, want %q", le.Message, tt.message)
			}
			if le.Code != tt.code || le.Param != tt.param {
				t.Errorf("code, param: got %q %q, want %q %q", le.Code, le.Param, tt.code, tt.param)
			}
			if le.RetryAfter != tt.retryAfter {
				t.Errorf("retry after: got %v, want %v", le.RetryAfter, tt.retryAfter)
			}
			if le.Target != "" {
				t.Errorf("target: got %q, want it left to the caller", le.Target)
			}
			if msg := err.Error(); strings.Contains(msg, "SECRET") || strings.Contains(msg, "sk-") {
				t.Errorf("error %q holds the key", msg)
			}
			if tt.kind == llm.Auth && (!strings.Contains(le.Message, "refused the gateway's credentials") || strings.Contains(le.Message, "Incorrect")) {
				t.Errorf("auth message: got %q, want ours and not the upstream's", le.Message)
			}
		})
	}
}

// TestRetryAfter covers what the openai adapter adds to transport.RetryAfter (whose own
// test has the header's forms): OpenAI's Retry-After-Ms, first.
func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"none", http.Header{}, 0},
		{"seconds", http.Header{"Retry-After": {"20"}}, 20 * time.Second},
		{"milliseconds", http.Header{"Retry-After-Ms": {"250"}}, 250 * time.Millisecond},
		{"milliseconds first", http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"20"}}, 250 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryAfter(tt.h, now); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c := New(Config{BaseURL: "http://" + addr + "/v1", APIKey: testKey, Query: map[string]string{"key": "SECRET"}})
	_, err = c.Stream(context.Background(), testRequest())
	wantKind(t, err, llm.Unavailable)
	if strings.Contains(err.Error(), "SECRET") {
		t.Errorf("error %q holds the query's secret", err)
	}
	transport.HTTPClient.CloseIdleConnections()
}

const (
	roleChunk   = `data: {"id":"c1","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n"
	textChunk   = `data: {"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}` + "\n\n"
	finishChunk = `data: {"id":"c1","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
	usageChunk  = `data: {"id":"c1","model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4,"prompt_tokens_details":{"cached_tokens":2},"completion_tokens_details":{"reasoning_tokens":1}}}` + "\n\n"
	doneLine    = "data: [DONE]\n\n"
	errorFrame  = `data: {"error":{"message":"boom","type":"server_error","code":null}}` + "\n\n"
)

func TestStreamEnds(t *testing.T) {
	tests := []struct {
		name string
		body string
		kind llm.Kind // KindNone: want io.EOF
		text string
	}{
		{"complete", roleChunk + textChunk + finishChunk + usageChunk + doneLine, llm.KindNone, "Hello"},
		{"no [DONE] after finish", roleChunk + textChunk + finishChunk + usageChunk, llm.KindNone, "Hello"},
		{"no usage, no [DONE] after finish", roleChunk + textChunk + finishChunk, llm.KindNone, "Hello"},
		{"no finish", roleChunk + textChunk, llm.Truncated, "Hello"},
		{"[DONE] before finish", roleChunk + textChunk + doneLine, llm.Truncated, "Hello"},
		{"empty body", "", llm.Truncated, ""},
		{"cut inside an event", roleChunk + textChunk + finishChunk + usageChunk[:40], llm.Truncated, "Hello"},
		{"cut before the blank line", roleChunk + textChunk + strings.TrimSuffix(finishChunk, "\n"), llm.Truncated, "Hello"},
		{"error frame before text", roleChunk + errorFrame + doneLine, llm.Unavailable, ""},
		{"error frame after text", roleChunk + textChunk + errorFrame + doneLine, llm.Unavailable, "Hello"},
		{"event: error with flat payload", roleChunk + "event: error\ndata: {\"message\":\"overloaded\",\"type\":\"overloaded_error\"}\n\n", llm.Unavailable, ""},
		{"rate limit error frame", roleChunk + `data: {"error":{"message":"slow down","code":"rate_limit_exceeded"}}` + "\n\n", llm.RateLimited, ""},
		{"not JSON", roleChunk + "data: <html>\n\n", llm.Unavailable, ""},
		{"keep-alive comments", ": ping\n\n" + roleChunk + ": ping\n\n" + textChunk + finishChunk + ": ping\n", llm.KindNone, "Hello"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, providertest.SSE(tt.body))
			evs, end := providertest.Drain(t, openStream(t, u.client(Config{})))
			if tt.kind == llm.KindNone {
				wantEOF(t, end)
			} else {
				wantKind(t, end, tt.kind)
			}
			r := assemble(evs)
			got := ""
			if len(r.Choices) > 0 {
				got = r.Choices[0].Text
			}
			if got != tt.text {
				t.Errorf("text: got %q, want %q", got, tt.text)
			}
		})
	}
}

func TestUsageAndStart(t *testing.T) {
	u := newUpstream(t, providertest.SSE(textChunk+finishChunk+usageChunk+doneLine))
	evs, end := providertest.Drain(t, openStream(t, u.client(Config{})))
	wantEOF(t, end)
	// The first chunk carries content: start comes once, before it.
	if len(evs) != 4 || evs[0].Type != llm.EvStart || evs[0].ID != "c1" || evs[0].Model != "m" || evs[1].Type != llm.EvText {
		t.Fatalf("got %s, want start, text, done, usage", transcript(evs, end))
	}
	got := *evs[3].Usage
	want := llm.Usage{PromptTokens: 3, CompletionTokens: 1, TotalTokens: 4, CachedTokens: 2, ReasoningTokens: 1}
	if got != want {
		t.Errorf("usage: got %+v, want %+v", got, want)
	}
}

func TestErrorsAreSticky(t *testing.T) {
	u := newUpstream(t, providertest.SSE(roleChunk+errorFrame))
	s := openStream(t, u.client(Config{}))
	_, first := providertest.Drain(t, s)
	for range 2 {
		if _, err := s.Recv(); err != first {
			t.Fatalf("got %v, want the same error %v", err, first)
		}
	}
}

func TestAbruptDisconnect(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, roleChunk+textChunk)
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close() // the chunked body never gets its terminator
		}
	})
	_, end := providertest.Drain(t, openStream(t, u.client(Config{})))
	wantKind(t, end, llm.Truncated)
}

// block serves a role and a text chunk, then holds the stream open until the client goes,
// and reports that it saw its context end.
func block(gone chan<- struct{}) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, roleChunk+textChunk)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	}
}

func waitGone(t *testing.T, gone <-chan struct{}) {
	t.Helper()
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream handler did not see its context end")
	}
}

func TestClientCancel(t *testing.T) {
	gone := make(chan struct{})
	u := newUpstream(t, block(gone))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := u.client(Config{}).Stream(ctx, testRequest())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 2 { // start, text
		if _, err := s.Recv(); err != nil {
			t.Fatalf("got %v, want an event", err)
		}
	}
	time.AfterFunc(20*time.Millisecond, cancel) // cancel while Recv blocks
	_, err = s.Recv()
	wantKind(t, err, llm.Canceled)
	waitGone(t, gone)
}

func TestDeadline(t *testing.T) {
	gone := make(chan struct{})
	u := newUpstream(t, block(gone))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	s, err := u.client(Config{}).Stream(ctx, testRequest())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, end := providertest.Drain(t, s)
	wantKind(t, end, llm.Timeout)
	waitGone(t, gone)
}

func TestCancelCause(t *testing.T) {
	// The chain cancels with a cause to tell a first-event timeout from a client that left.
	gone := make(chan struct{})
	u := newUpstream(t, block(gone))
	ctx, cancel := context.WithCancelCause(context.Background())
	s, err := u.client(Config{}).Stream(ctx, testRequest())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cancel(llm.Errorf(llm.Timeout, "no first event within 1s"))
	_, end := providertest.Drain(t, s)
	wantKind(t, end, llm.Timeout)
	waitGone(t, gone)
}

func TestCanceledBeforeCall(t *testing.T) {
	u := newUpstream(t, providertest.SSE(roleChunk))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := u.client(Config{}).Stream(ctx, testRequest())
	wantKind(t, err, llm.Canceled)
}

func TestCloseUnblocksRecv(t *testing.T) {
	gone := make(chan struct{})
	u := newUpstream(t, block(gone))
	s := openStream(t, u.client(Config{}))
	for range 2 {
		if _, err := s.Recv(); err != nil {
			t.Fatalf("got %v, want an event", err)
		}
	}
	time.AfterFunc(20*time.Millisecond, func() { s.Close() })
	_, err := s.Recv()
	if llm.KindOf(err) != llm.Canceled {
		t.Errorf("got %v, want Canceled after Close", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: got %v, want nil", err)
	}
	waitGone(t, gone)
}

func TestJSONInsteadOfStream(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}]}`)
	})
	_, err := u.client(Config{}).Stream(context.Background(), testRequest())
	wantKind(t, err, llm.Unavailable)
	if !errors.As(err, new(*llm.Error)) {
		t.Errorf("got %T, want *llm.Error", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func TestConnectTimeout(t *testing.T) {
	hc := &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: timeoutError{}}
	})}
	c := New(Config{BaseURL: "http://127.0.0.1:9/v1", APIKey: testKey, HTTPClient: hc})
	_, err := c.Stream(context.Background(), testRequest())
	wantKind(t, err, llm.Timeout)
}
