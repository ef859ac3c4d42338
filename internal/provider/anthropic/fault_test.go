package anthropic

import (
	"context"
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
		typ        string
		retryAfter time.Duration
	}{
		{name: "400 keeps message", status: 400, kind: llm.Invalid, typ: "invalid_request_error",
			body:    `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 100000 > 64000, which is the maximum allowed"},"request_id":"req_1"}`,
			message: "max_tokens: 100000 > 64000, which is the maximum allowed"},
		{name: "404 model", status: 404, kind: llm.Invalid, typ: "not_found_error",
			body: `{"type":"error","error":{"type":"not_found_error","message":"model: claude-x"}}`, message: "model: claude-x"},
		{name: "413 plain text", status: 413, kind: llm.Invalid, body: "request too large\n", message: "request too large"},
		{name: "422", status: 422, kind: llm.Invalid, body: `{"error":"unprocessable"}`, message: "unprocessable"},
		{name: "401", status: 401, kind: llm.Auth, typ: "authentication_error",
			body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + testKey + `"}}`},
		{name: "403", status: 403, kind: llm.Auth, typ: "permission_error",
			body: `{"type":"error","error":{"type":"permission_error","message":"key ` + testKey + ` may not use this model"}}`},
		{name: "429 retry-after", status: 429, kind: llm.RateLimited, typ: "rate_limit_error", header: map[string]string{"Retry-After": "7"},
			body: `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`, retryAfter: 7 * time.Second},
		{name: "429 no retry-after", status: 429, kind: llm.RateLimited, body: `{}`},
		{name: "529 overloaded", status: 529, kind: llm.Unavailable, typ: "overloaded_error",
			body:    `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			message: "anthropic answered HTTP 529: Overloaded"},
		{name: "529 retry-after", status: 529, kind: llm.Unavailable, header: map[string]string{"Retry-After": "2"}, body: ``, retryAfter: 2 * time.Second},
		{name: "500", status: 500, kind: llm.Unavailable, typ: "api_error", body: `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`},
		{name: "502 html", status: 502, kind: llm.Unavailable, body: "<html>bad gateway</html>", message: "anthropic answered HTTP 502: Bad Gateway"},
		{name: "408", status: 408, kind: llm.Unavailable, body: ""},
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
			if le.Type != tt.typ {
				t.Errorf("type: got %q, want %q", le.Type, tt.typ)
			}
			if le.RetryAfter != tt.retryAfter {
				t.Errorf("retry after: got %v, want %v", le.RetryAfter, tt.retryAfter)
			}
			if le.Target != "" {
				t.Errorf("target: got %q, want it left to the caller", le.Target)
			}
			if msg := err.Error(); strings.Contains(msg, "SECRET") || strings.Contains(msg, "sk-ant") {
				t.Errorf("error %q holds the key", msg)
			}
			if tt.kind == llm.Auth && (!strings.Contains(le.Message, "refused the gateway's credentials") || strings.Contains(le.Message, "x-api-key")) {
				t.Errorf("auth message: got %q, want ours and not the upstream's", le.Message)
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
	c := New(Config{BaseURL: "http://" + addr, APIKey: testKey})
	_, err = c.Stream(context.Background(), testRequest())
	wantKind(t, err, llm.Unavailable)
	if strings.Contains(err.Error(), "SECRET") {
		t.Errorf("error %q holds the key", err)
	}
	transport.HTTPClient.CloseIdleConnections()
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
	c := New(Config{BaseURL: "http://127.0.0.1:9", APIKey: testKey, HTTPClient: hc})
	_, err := c.Stream(context.Background(), testRequest())
	wantKind(t, err, llm.Timeout)
}

func TestJSONInsteadOfStream(t *testing.T) {
	tests := []struct {
		name string
		body string
		kind llm.Kind
	}{
		{"a message", `{"id":"msg_1","type":"message","content":[{"type":"text","text":"hi"}]}`, llm.Unavailable},
		{"an overloaded error with status 200", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, llm.Unavailable},
		{"a rate limit with status 200", `{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}`, llm.RateLimited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, tt.body)
			})
			_, err := u.client(Config{}).Stream(context.Background(), testRequest())
			wantKind(t, err, tt.kind)
		})
	}
}

func TestUntranslatableRequestSendsNothing(t *testing.T) {
	u := newUpstream(t, providertest.SSE(msgStart+msgStop))
	r := testRequest()
	r.N = 2
	_, err := u.client(Config{}).Stream(context.Background(), r)
	le := wantKind(t, err, llm.Unsupported)
	if le.Status != 400 || llm.HTTPStatus(err) != 400 || !strings.Contains(le.Message, "one choice") {
		t.Errorf("got status %d message %q, want 400 saying Anthropic serves one choice", le.Status, le.Message)
	}
	if body, _, _ := u.Last(); body != nil {
		t.Errorf("the upstream got %s, want no call", body)
	}
}
