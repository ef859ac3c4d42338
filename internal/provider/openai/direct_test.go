package openai

import (
	"context"
	"net/http"
	"net/http/httputil"
	"testing"

	"github.com/openai/openai-go/v3/option"
	"go.opentelemetry.io/otel/trace"
)

// TestDirectRequest checks that the requests post writes itself are byte for byte the ones
// openai-go writes for the same call (the reference), for both streamed paths, with extra
// headers, a query and a trace to carry.
func TestDirectRequest(t *testing.T) {
	dumps := make(chan []byte, 1)
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		b, err := httputil.DumpRequest(r, true)
		if err != nil {
			t.Error(err)
		}
		dumps <- b
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: [DONE]\n\n"))
	})
	c := u.client(Config{Headers: map[string]string{"api-key": "azure-key", "X-Team": "blue"},
		Query: map[string]string{"api-version": "2024-10-21"}})
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2},
		TraceFlags: trace.FlagsSampled})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	body := []byte(`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"stream":true}`)
	for _, path := range streamedPaths {
		if _, ok := c.prep[path]; !ok {
			t.Fatalf("%s: not prepared: post would not write it itself", path)
		}
		var res *http.Response
		if err := c.sdk.Post(ctx, path, nil, &res, option.WithRequestBody("application/json", body)); err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		want := <-dumps
		rc, err := c.post(ctx, path, body)
		if err != nil {
			t.Fatal(err)
		}
		rc.Close()
		if got := <-dumps; string(got) != string(want) {
			t.Errorf("%s: post wrote\n%s\nopenai-go writes\n%s", path, got, want)
		}
	}
}
