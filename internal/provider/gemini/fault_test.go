package gemini

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

func TestStatusErrors(t *testing.T) {
	tests := []struct {
		name, body string
		status     int
		kind       llm.Kind
		typ, msg   string
		retry      time.Duration
	}{
		{name: "400", status: 400, kind: llm.Invalid, typ: "INVALID_ARGUMENT",
			body: `{"error":{"code":400,"message":"* GenerateContentRequest.contents: contents is not specified","status":"INVALID_ARGUMENT"}}`,
			msg:  "* GenerateContentRequest.contents: contents is not specified"},
		{name: "404 model", status: 404, kind: llm.Invalid, typ: "NOT_FOUND",
			body: `{"error":{"code":404,"message":"models/gemini-9 is not found for API version v1beta","status":"NOT_FOUND"}}`},
		{name: "403", status: 403, kind: llm.Auth, typ: "PERMISSION_DENIED",
			body: `{"error":{"code":403,"message":"Method doesn't allow unregistered callers","status":"PERMISSION_DENIED"}}`},
		{name: "429 retry info", status: 429, kind: llm.RateLimited, typ: "RESOURCE_EXHAUSTED", retry: 37 * time.Second,
			body: `{"error":{"code":429,"message":"You exceeded your current quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}`},
		{name: "503", status: 503, kind: llm.Unavailable, typ: "UNAVAILABLE",
			body: `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`, msg: "gemini answered HTTP 503 UNAVAILABLE: The model is overloaded."},
		{name: "500 html", status: 500, kind: llm.Unavailable, body: "<html>oops</html>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := upstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			})
			_, err := client(u, Config{}).Stream(context.Background(), testRequest())
			le := wantKind(t, err, tt.kind)
			if le.Status != tt.status || le.Type != tt.typ || le.RetryAfter != tt.retry || tt.msg != "" && le.Message != tt.msg {
				t.Errorf("got %+v", le)
			}
		})
	}
}

// TestBadKey: the Gemini API answers a wrong key with 400 INVALID_ARGUMENT, which is the
// gateway's credentials (Auth, the chain falls back), not the client's request; the key
// never shows, even where the upstream quotes it.
func TestBadKey(t *testing.T) {
	u := upstream(t, providertest.SSE(""))
	_, err := client(u, Config{APIKey: "AIza-wrong", Scrub: providertest.Scrub("AIza-wrong")}).Stream(context.Background(), testRequest())
	le := wantKind(t, err, llm.Auth)
	if !strings.Contains(le.Message, "refused the gateway's credentials") {
		t.Errorf("got %q", le.Message)
	}
	_, h, _ := u.Last()
	if h.Get("X-Goog-Api-Key") != "AIza-wrong" || strings.Contains(u.URL, "key=") {
		t.Errorf("the key goes in x-goog-api-key, never the URL")
	}
}

// TestStreamFaults is the fault matrix inside a 200 stream.
func TestStreamFaults(t *testing.T) {
	text := `data: {"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"},"index":0}],"responseId":"r1"}` + "\r\n\r\n"
	finish := `data: {"candidates":[{"content":{"parts":[{"text":"lo"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"totalTokenCount":5}}` + "\r\n\r\n"
	tests := []struct {
		name    string
		body    string
		healthy bool
		kind    llm.Kind
		typ     string
	}{
		{name: "rate limit before content", kind: llm.RateLimited, typ: "RESOURCE_EXHAUSTED",
			body: `data: {"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}` + "\r\n\r\n"},
		{name: "error before content", kind: llm.Unavailable, typ: "INTERNAL",
			body: `data: {"error":{"code":500,"message":"An internal error has occurred.","status":"INTERNAL"}}` + "\r\n\r\n"},
		{name: "error after text", healthy: true, kind: llm.Unavailable, typ: "UNAVAILABLE",
			body: text + `data: {"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}` + "\r\n\r\n"},
		{name: "cut inside an event", healthy: true, kind: llm.Truncated, body: text + finish[:len(finish)-20]},
		{name: "finish without its blank line", healthy: true, kind: llm.Truncated, body: text + strings.TrimSuffix(finish, "\r\n\r\n")},
		{name: "ends before the finish", healthy: true, kind: llm.Truncated, body: text},
		{name: "not JSON", kind: llm.Unavailable, body: "data: {oops\r\n\r\n"},
		{name: "candidate out of range", kind: llm.Unavailable, body: `data: {"candidates":[{"index":3}]}` + "\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := upstream(t, providertest.SSE(tt.body))
			s, err := client(u, Config{}).Stream(context.Background(), testRequest())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, end := providertest.Drain(t, s)
			healthy := false
			for _, e := range evs {
				healthy = healthy || e.Healthy()
			}
			if healthy != tt.healthy {
				t.Errorf("healthy: got %v, want %v (%v)", healthy, tt.healthy, evs)
			}
			if le := wantKind(t, end, tt.kind); le.Type != tt.typ {
				t.Errorf("type %q, want %q", le.Type, tt.typ)
			}
		})
	}
}

// TestStall: an upstream that stops sending holds Recv until the attempt's context ends;
// the error is the cause the chain gave (its idle timeout).
func TestStall(t *testing.T) {
	release := make(chan struct{})
	u := upstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"candidates":[{"content":{"parts":[{"text":"Hel"}]},"index":0}]}`+"\r\n\r\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	ctx, cancel := context.WithCancelCause(context.Background())
	s, err := client(u, Config{}).Stream(ctx, testRequest())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 2 { // start, text
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	idle := &llm.Error{Kind: llm.Timeout, Message: "idle timeout"}
	s.(llm.Waiter).BeforeWait(func() { cancel(idle) })
	if _, err := s.Recv(); err != idle {
		t.Fatalf("got %v, want the idle timeout", err)
	}
}

// TestToken: a Vertex-style token source's token goes as a bearer token; its failure is
// Auth and nothing is sent.
func TestToken(t *testing.T) {
	u := providertest.NewUpstream(t, providertest.SSE(`data: {"candidates":[{"content":{"parts":[{"text":"ok"}]},"finishReason":"STOP","index":0}]}`+"\r\n\r\n"))
	c := New(Config{BaseURL: u.URL, Token: func(context.Context) (string, error) { return "ya29.token", nil }})
	s, err := c.Stream(context.Background(), testRequest())
	if err != nil {
		t.Fatal(err)
	}
	providertest.Drain(t, s)
	s.Close()
	if _, h, _ := u.Last(); h.Get("Authorization") != "Bearer ya29.token" || h.Get("X-Goog-Api-Key") != "" {
		t.Errorf("got headers %v", h)
	}
	// A proxy that quotes the request's headers back does not leak the token.
	u3 := providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		io.WriteString(w, `{"error":{"code":400,"message":"bad request with `+r.Header.Get("Authorization")+`","status":"INVALID_ARGUMENT"}}`)
	})
	c = New(Config{BaseURL: u3.URL, Token: func(context.Context) (string, error) { return "ya29.token", nil }})
	_, err = c.Stream(context.Background(), testRequest())
	if le := wantKind(t, err, llm.Invalid); strings.Contains(le.Message, "ya29.token") || !strings.Contains(le.Message, "[MASKED]") {
		t.Errorf("got %q, want the token masked", le.Message)
	}
	u2 := providertest.NewUpstream(t, providertest.SSE(""))
	c = New(Config{BaseURL: u2.URL, Token: func(context.Context) (string, error) { return "", io.ErrUnexpectedEOF }})
	_, err = c.Stream(context.Background(), testRequest())
	wantKind(t, err, llm.Auth)
	if body, _, _ := u2.Last(); body != nil {
		t.Error("the upstream got a call")
	}
}

func TestVertexURL(t *testing.T) {
	if got := VertexURL("", "my-proj", "us-central1"); got != "https://us-central1-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-central1/publishers/google" {
		t.Errorf("regional: %s", got)
	}
	if got := VertexURL("", "my-proj", "global"); got != "https://aiplatform.googleapis.com/v1/projects/my-proj/locations/global/publishers/google" {
		t.Errorf("global: %s", got)
	}
	if got := VertexURL("http://127.0.0.1:1/", "p", "europe-west4"); got != "http://127.0.0.1:1/v1/projects/p/locations/europe-west4/publishers/google" {
		t.Errorf("endpoint: %s", got)
	}
}
