package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/server"
)

// memTelemetry holds what a server recorded, in memory.
type memTelemetry struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
}

// recordTelemetry makes s record its spans (every one sampled) and metrics in memory.
func recordTelemetry(s *server.Server) *memTelemetry {
	m := &memTelemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	server.SetTelemetry(s, sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(m.spans)),
		sdkmetric.NewMeterProvider(sdkmetric.WithReader(m.reader)), nil)
	return m
}

// metric returns the data of the metric name, nil when nothing was recorded.
func (m *memTelemetry) metric(t *testing.T, name string) metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := m.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			if mt.Name == name {
				return mt.Data
			}
		}
	}
	return nil
}

// histogram returns the one data point of histogram name.
func (m *memTelemetry) histogram(t *testing.T, name string) metricdata.HistogramDataPoint[float64] {
	t.Helper()
	h, ok := m.metric(t, name).(metricdata.Histogram[float64])
	if !ok || len(h.DataPoints) != 1 || h.DataPoints[0].Count != 1 {
		t.Fatalf("%s: got %+v, want one histogram point of one observation", name, h)
	}
	return h.DataPoints[0]
}

func attr(attrs []attribute.KeyValue, key string) string {
	for _, a := range attrs {
		if string(a.Key) == key {
			return a.Value.String()
		}
	}
	return ""
}

// The time to first token runs from the request's arrival to the first text the client
// gets: with the upstream's first chunk 3s late (fake time, so exact), it is at least 3s, and
// no more than the request's own duration.
func TestTimeToFirstTokenFromRequestStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := simGateway(t, "  slow: [\"sim/text?first=3s&delay=100ms&len=40&chunk=8\"]\n")
		m := recordTelemetry(s)
		rec := serve(s, "slow")
		if !strings.HasSuffix(rec.body.String(), "data: [DONE]\n\n") {
			t.Fatalf("got %q, want a whole stream", rec.body.String())
		}
		ttft := m.histogram(t, "gen_ai.server.time_to_first_token")
		dur := m.histogram(t, "gen_ai.server.request.duration")
		if ttft.Sum < 3 || ttft.Sum > dur.Sum {
			t.Errorf("got time to first token %vs and duration %vs, want 3s <= ttft <= duration", ttft.Sum, dur.Sum)
		}
		if dur.Sum <= 3 {
			t.Errorf("got duration %vs, want more than the first chunk's 3s (later chunks are 100ms apart)", dur.Sum)
		}
		if got := attr(ttft.Attributes.ToSlice(), "gen_ai.request.model"); got != "slow" {
			t.Errorf("got gen_ai.request.model %q, want the alias", got)
		}
	})
}

// A non-streamed answer has no time-to-first-token observation, and says its overhead.
func TestOverheadHeaderAndNoTTFTWhenNotStreamed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := simGateway(t, "  slow: [\"sim/text?first=1s&len=20\"]\n")
		m := recordTelemetry(s)
		rec := &recorder{h: http.Header{}}
		s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(chatBody("slow", false, ""))))
		if rec.status != 200 || rec.sent.Get("X-Sluice-Overhead-Ms") == "" {
			t.Fatalf("got %d, headers %v, want 200 with X-Sluice-Overhead-Ms", rec.status, rec.sent)
		}
		if got := rec.sent.Get("X-Sluice-Overhead-Ms"); got != "0.000" {
			t.Errorf("got X-Sluice-Overhead-Ms %q, want 0.000 (fake time: only the upstream call took time)", got)
		}
		if m.metric(t, "gen_ai.server.time_to_first_token") != nil {
			t.Errorf("got a time to first token for a non-streamed answer")
		}
		if h := m.histogram(t, "gen_ai.client.operation.duration"); h.Sum < 1 {
			t.Errorf("got a provider call of %vs, want at least the 1s before its first chunk", h.Sum)
		}
		streamed := serve(s, "slow")
		if streamed.sent.Get("X-Sluice-Overhead-Ms") != "" {
			t.Errorf("got X-Sluice-Overhead-Ms on a stream, whose headers leave before it is known")
		}
	})
}

// A fallback leaves two attempt spans under the server span, with their outcome kinds, and
// the fallback and commit events.
func TestFallbackAttemptSpans(t *testing.T) {
	s := simGateway(t, "  flaky: [\"sim/text?fail=503\", \"sim/echo\"]\n")
	m := recordTelemetry(s)
	if rec := serve(s, "flaky"); rec.status != 200 {
		t.Fatalf("got %d, want 200", rec.status)
	}
	var srv sdktrace.ReadOnlySpan
	var attempts []sdktrace.ReadOnlySpan
	for _, sp := range m.spans.Ended() {
		switch sp.SpanKind() {
		case trace.SpanKindServer:
			srv = sp
		case trace.SpanKindClient:
			attempts = append(attempts, sp)
		}
	}
	if srv == nil || srv.Name() != "chat flaky" {
		t.Fatalf("got server span %v, want one named \"chat flaky\"", srv)
	}
	want := []struct{ target, outcome, committed string }{
		{"sim/text?fail=503", "unavailable", "false"},
		{"sim/echo", "none", "true"},
	}
	if len(attempts) != len(want) {
		t.Fatalf("got %d attempt spans, want %d", len(attempts), len(want))
	}
	for i, w := range want {
		a, at := attempts[i], attempts[i].Attributes()
		if a.Parent().SpanID() != srv.SpanContext().SpanID() {
			t.Errorf("attempt %d: got parent %v, want the server span", i, a.Parent().SpanID())
		}
		if attr(at, "sluice.target") != w.target || attr(at, "sluice.outcome") != w.outcome || attr(at, "sluice.committed") != w.committed {
			t.Errorf("attempt %d: got %v, want target %s outcome %s committed %s", i, at, w.target, w.outcome, w.committed)
		}
		if a.StartTime().Before(srv.StartTime()) || a.EndTime().After(srv.EndTime()) {
			t.Errorf("attempt %d: runs %v..%v, outside its request %v..%v", i, a.StartTime(), a.EndTime(), srv.StartTime(), srv.EndTime())
		}
	}
	if attempts[0].EndTime().After(attempts[1].StartTime()) {
		t.Errorf("the first attempt ends after the second starts")
	}
	events := map[string]bool{}
	for _, e := range srv.Events() {
		events[e.Name] = true
	}
	if !events["sluice.fallback"] || !events["sluice.commit"] {
		t.Errorf("got server span events %v, want sluice.fallback and sluice.commit", events)
	}
	at := srv.Attributes()
	if attr(at, "gen_ai.operation.name") != "chat" || attr(at, "gen_ai.request.model") != "flaky" ||
		attr(at, "gen_ai.provider.name") != "sim" || attr(at, "sluice.attempts") != "2" || attr(at, "gen_ai.input.messages") != "" {
		t.Errorf("got server span attributes %v", at)
	}
	fb, ok := m.metric(t, "sluice.fallbacks").(metricdata.Sum[int64])
	if !ok || len(fb.DataPoints) != 1 || fb.DataPoints[0].Value != 1 ||
		attr(fb.DataPoints[0].Attributes.ToSlice(), "sluice.outcome") != "unavailable" {
		t.Errorf("got sluice.fallbacks %+v, want one from sim/text?fail=503, unavailable", fb)
	}
}

// headerRecorder is an upstream that records the headers of its last request.
type headerRecorder struct {
	h    http.Handler
	mu   sync.Mutex
	last http.Header
}

func (r *headerRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.last = req.Header.Clone()
	r.mu.Unlock()
	r.h.ServeHTTP(w, req)
}

func (r *headerRecorder) header(name string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last.Get(name)
}

// An incoming traceparent is honoured: the gateway's span is its child, the upstream gets a
// child of that span in the same trace (over both adapters), and traceresponse names it.
func TestTraceparentPropagated(t *testing.T) {
	up := &headerRecorder{h: mockllm.New(mockllm.Options{})}
	ms := httptest.NewServer(up)
	defer ms.Close()
	srv := buildConfig(t, `
providers:
  mock: {kind: openai-compatible, base_url: "${MOCK_URL}/v1"}
  anth: {kind: anthropic, base_url: "${MOCK_URL}", api_key: test}
models:
  default: [mock/echo]
  claude: [anth/echo]
`, map[string]string{"MOCK_URL": ms.URL}, io.Discard)
	m := recordTelemetry(srv)
	gs := httptest.NewServer(srv)
	defer gs.Close()
	const traceID, callerSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	for _, model := range []string{"default", "claude"} {
		req, _ := http.NewRequest("POST", gs.URL+"/v1/chat/completions", strings.NewReader(chatBody(model, true, "")))
		req.Header.Set("Traceparent", "00-"+traceID+"-"+callerSpan+"-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		// The whole body: its end comes after the handler returned, so the span has ended.
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		got := strings.Split(up.header("Traceparent"), "-")
		if len(got) != 4 || got[0] != "00" || got[1] != traceID || got[2] == callerSpan || got[3] != "01" {
			t.Fatalf("%s: the upstream got traceparent %q, want a child in trace %s", model, up.header("Traceparent"), traceID)
		}
		if tr := resp.Header.Get("Traceresponse"); tr != "00-"+traceID+"-"+got[2]+"-01" {
			t.Errorf("%s: got traceresponse %q, want the gateway's span %s", model, tr, got[2])
		}
		var found bool
		for _, sp := range m.spans.Ended() {
			if sp.SpanContext().SpanID().String() == got[2] {
				found = sp.SpanKind() == trace.SpanKindServer && sp.Parent().SpanID().String() == callerSpan && sp.Parent().IsRemote()
			}
		}
		if !found {
			t.Errorf("%s: got no server span %s child of the caller's %s", model, got[2], callerSpan)
		}
	}
	if up.header("Baggage") != "" {
		t.Errorf("got baggage upstream, want only the W3C trace context")
	}
}
