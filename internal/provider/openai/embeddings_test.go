package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

func TestEmbed(t *testing.T) {
	const vectors = `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,-0.2]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":2,"total_tokens":2}}`
	tests := []struct {
		name       string
		status     int
		header     map[string]string
		answer     string
		kind       llm.Kind // KindNone: success
		retryAfter time.Duration
	}{
		{name: "vectors", status: 200, answer: vectors},
		{name: "400 is the request's", status: 400, answer: `{"error":{"message":"bad input","type":"invalid_request_error"}}`, kind: llm.Invalid},
		{name: "429 with Retry-After", status: 429, header: map[string]string{"Retry-After": "3"},
			answer: `{"error":{"message":"slow down","code":"rate_limit_exceeded"}}`, kind: llm.RateLimited, retryAfter: 3 * time.Second},
		{name: "500", status: 500, answer: `{"error":{"message":"boom"}}`, kind: llm.Unavailable},
		{name: "401", status: 401, answer: `{"error":{"message":"Incorrect API key provided: ` + testKey + `"}}`, kind: llm.Auth},
		{name: "error inside a 200", status: 200, answer: `{"error":{"message":"overloaded","type":"server_error"}}`, kind: llm.Unavailable},
		{name: "not JSON", status: 200, answer: `<html>proxy</html>`, kind: llm.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []byte
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/v1/embeddings" || r.Header.Get("Accept") != "application/json" {
					t.Errorf("got %s with Accept %q, want /v1/embeddings asking for JSON", r.URL.Path, r.Header.Get("Accept"))
				}
				got, _ = io.ReadAll(r.Body)
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.answer)
			}))
			defer srv.Close()
			c := New(Config{Name: "up", BaseURL: srv.URL + "/v1", APIKey: testKey})
			out, err := c.Plain(context.Background(), "embeddings", "text-embedding-3-small",
				[]byte(`{"input": ["a"], "model": "embed", "dimensions": 2, "x_extra": {"k": 1}}`))
			// The model is replaced and written first; the other members keep their order.
			if want := `{"model":"text-embedding-3-small","input":["a"],"dimensions":2,"x_extra":{"k": 1}}`; string(got) != want {
				t.Errorf("got upstream body %s, want %s", got, want)
			}
			if tt.kind == llm.KindNone {
				if err != nil || string(out) != vectors {
					t.Fatalf("got %s, %v, want the answer unchanged", out, err)
				}
				return
			}
			var le *llm.Error
			if !errors.As(err, &le) || le.Kind != tt.kind {
				t.Fatalf("got %v, want an *llm.Error of kind %v", err, tt.kind)
			}
			if le.RetryAfter != tt.retryAfter {
				t.Errorf("got Retry-After %v, want %v", le.RetryAfter, tt.retryAfter)
			}
		})
	}
}

func TestWithModelRejectsNonObject(t *testing.T) {
	for _, body := range []string{`[1]`, `"x"`, `{"a":`, ``} {
		if _, err := withModel([]byte(body), "m"); err == nil {
			t.Errorf("%q: got no error, want one", body)
		}
	}
}
