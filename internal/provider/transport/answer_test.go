package transport

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/propagation"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Open hands back a stream, or what the upstream sent instead with its body capped, or the
// call's *llm.Error.
func TestOpen(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stream":
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte("data: {}\n\n"))
		case "/json":
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			_, _ = w.Write([]byte(`{"error":"x"}`))
		default:
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(strings.Repeat("e", MaxErrorBody+100)))
		}
	}))
	defer srv.Close()
	open := func(ctx context.Context, path string) (*http.Response, *Answer, error) {
		hr, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+path, nil)
		return Open(ctx, srv.Client(), "up", hr)
	}
	ctx := context.Background()
	if res, a, err := open(ctx, "/stream"); err != nil || a != nil || res == nil {
		t.Fatalf("stream: got %v %+v %v", res, a, err)
	} else {
		res.Body.Close()
	}
	if _, a, err := open(ctx, "/json"); err != nil || a == nil || !a.JSON || a.Status != 200 || string(a.Body) != `{"error":"x"}` {
		t.Errorf("json: got %+v %v", a, err)
	}
	if _, a, err := open(ctx, "/limited"); err != nil || a == nil || a.JSON || a.Status != 429 || len(a.Body) != MaxErrorBody {
		t.Errorf("429: got %v, %v; want the status and %d bytes of its body", a != nil && a.JSON, err, MaxErrorBody)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := open(canceled, "/stream"); llm.KindOf(err) != llm.Canceled {
		t.Errorf("canceled: got %v", err)
	}
	srv.Close()
	if _, _, err := open(ctx, "/stream"); llm.KindOf(err) != llm.Unavailable {
		t.Errorf("refused: got %v, want Unavailable", err)
	}
}

// An endpoint's request carries the adapter's headers, then the configuration's over them,
// and the caller's trace.
func TestEndpointRequest(t *testing.T) {
	ep := NewEndpoint("up", "text/event-stream", map[string]string{"X-Api-Key": "k", "Anthropic-Version": "1"},
		map[string]string{"anthropic-version": "2", "X-Extra": "e"}, nil)
	if ep.Client != HTTPClient {
		t.Errorf("got client %p, want the shared one", ep.Client)
	}
	tp := propagation.TraceContext{}
	ctx := tp.Extract(context.Background(), propagation.MapCarrier{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"})
	hr, err := ep.Request(ctx, "http://127.0.0.1:1/v1/messages", []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Content-Type": "application/json", "Accept": "text/event-stream", "X-Api-Key": "k",
		"Anthropic-Version": "2", "X-Extra": "e", "Traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	for k, v := range want {
		if got := hr.Header.Get(k); got != v {
			t.Errorf("%s: got %q, want %q", k, got, v)
		}
	}
	if ep.Header.Get("Traceparent") != "" {
		t.Errorf("the endpoint's headers got the call's trace: want a copy per request")
	}
	if _, err := ep.Request(ctx, "http://[::1", nil); llm.KindOf(err) != llm.Internal {
		t.Errorf("bad URL: got %v, want Internal", err)
	}
}
