package telemetry

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/sluice-gw/sluice/internal/llm"
)

type mem struct {
	tel    *Telemetry
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
}

func newMem(content bool) *mem {
	m := &mem{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	m.tel = New(Options{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(m.spans)),
		MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(m.reader)), CaptureContent: content,
		Models: []string{"default", "a/x", "b/y"}, Providers: map[string]string{"a": "openai", "b": "b"}})
	return m
}

// sum returns the points of counter name as "label=value,... -> n".
func (m *mem) sum(t *testing.T, name string) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := m.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			if s, ok := mt.Data.(metricdata.Sum[int64]); ok && mt.Name == name {
				for _, p := range s.DataPoints {
					var kv []string
					for _, a := range p.Attributes.ToSlice() {
						kv = append(kv, string(a.Key)+"="+a.Value.String())
					}
					out[strings.Join(kv, ",")] += p.Value
				}
			}
		}
	}
	return out
}

// sumCheck is what counter metric should hold: its points, as sum writes them.
type sumCheck struct {
	metric string
	want   map[string]int64
}

// check compares each counter's points with its want.
func (m *mem) check(t *testing.T, checks []sumCheck) {
	t.Helper()
	for _, c := range checks {
		got := m.sum(t, c.metric)
		if len(got) != len(c.want) {
			t.Errorf("%s: got %v, want %v", c.metric, got, c.want)
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s: got %v, want %s = %d", c.metric, got, k, v)
			}
		}
	}
}

func attrOf(attrs []attribute.KeyValue, key string) (string, bool) {
	for _, a := range attrs {
		if string(a.Key) == key {
			return a.Value.String(), true
		}
	}
	return "", false
}

// request runs one request through m: a failed attempt, then a served one, with hooks.
func (m *mem) request(t *testing.T, model string) *Access {
	t.Helper()
	r := httptest.NewRequest("POST", "/v1/chat/completions", nil)
	r.Header.Set("Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	start := time.Now()
	ctx, rq := m.tel.Start(r.Context(), r, "/v1/chat/completions", start)
	Guardrail(ctx, "no-secrets", "input", VerdictBlock)
	Guardrail(ctx, "no-secrets", "output", "maybe")
	Restart(ctx, "b/y", "unavailable")
	Cooldown(ctx, "a/x", 5*time.Second)
	in := &Access{ID: "r1", Model: model, Target: "b/y", Stream: true, Status: 200, Kind: llm.KindNone, Start: start,
		Duration: 2 * time.Second, FirstText: 1500 * time.Millisecond, Attempts: 2, KeyName: "team-a",
		Tries: []llm.Attempt{
			{Target: "a/x", Start: start.Add(10 * time.Millisecond), Kind: llm.RateLimited, Status: 429, End: start.Add(100 * time.Millisecond)},
			{Target: "b/y", Start: start.Add(110 * time.Millisecond), Committed: true, FirstEvent: time.Second},
		},
		Request:  &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "the prompt"}}}}},
		Response: &llm.Response{Model: "y-2026", ID: "resp_1", Choices: []llm.Choice{{Text: "the answer", Finish: "stop"}}},
		Usage:    &Usage{Prompt: 12, Completion: 34, Total: 46}, Masks: map[string]int{"aws_access_key": 2}}
	rq.End(ctx, in)
	return in
}

// The request's record lists its guardrails' verdicts and its tool calls, in order.
func TestRequestLists(t *testing.T) {
	m := newMem(false)
	r := httptest.NewRequest("POST", "/v1/chat/completions", nil)
	start := time.Now()
	ctx, rq := m.tel.Start(r.Context(), r, "/v1/chat/completions", start)
	Guardrail(ctx, "no-secrets", "input", VerdictBlock)
	Tool(ctx, ToolRun{Name: "docs__search", Label: "docs", Start: start, Duration: 3 * time.Millisecond, Outcome: "boom"})
	Guardrail(ctx, "no-secrets", "output", "maybe")
	in := &Access{ID: "r1", Model: "default", Start: start, Duration: time.Second}
	rq.End(ctx, in)
	want := []Verdict{{"no-secrets", "input", VerdictBlock}, {"no-secrets", "output", "other"}}
	if !slices.Equal(in.Verdicts, want) {
		t.Errorf("verdicts %+v, want %+v", in.Verdicts, want)
	}
	if len(in.Calls) != 1 || in.Calls[0] != (ToolCall{"docs__search", "docs", 3 * time.Millisecond, ToolError}) {
		t.Errorf("calls %+v, want the one tool call, its outcome an error", in.Calls)
	}
}

func TestRequestSpans(t *testing.T) {
	m := newMem(false)
	in := m.request(t, "default")
	spans := m.spans.Ended()
	if len(spans) != 3 {
		t.Fatalf("got %d spans, want the server span and two attempts", len(spans))
	}
	a1, a2, srv := spans[0], spans[1], spans[2]
	if srv.Name() != "chat default" || srv.Parent().SpanID().String() != "b7ad6b7169203331" || !srv.Parent().IsRemote() {
		t.Errorf("got server span %q with parent %v, want \"chat default\", a child of the caller's", srv.Name(), srv.Parent())
	}
	if got := srv.EndTime().Sub(srv.StartTime()); got != 2*time.Second {
		t.Errorf("got a server span of %v, want the request's 2s", got)
	}
	want := map[string]string{"gen_ai.operation.name": "chat", "gen_ai.request.model": "default", "gen_ai.response.model": "y-2026",
		"gen_ai.provider.name": "b", "gen_ai.usage.input_tokens": "12", "gen_ai.usage.output_tokens": "34",
		"gen_ai.response.finish_reasons": `["stop"]`, "sluice.key.name": "team-a", "gen_ai.request.stream": "true"}
	for k, v := range want {
		if got, _ := attrOf(srv.Attributes(), k); got != v {
			t.Errorf("server span %s: got %q, want %q", k, got, v)
		}
	}
	for _, k := range []string{"gen_ai.input.messages", "gen_ai.output.messages"} {
		if _, ok := attrOf(srv.Attributes(), k); ok {
			t.Errorf("got %s without capture_content", k)
		}
	}
	if got, _ := attrOf(a1.Attributes(), "sluice.outcome"); got != "rate_limited" || a1.EndTime().Sub(a1.StartTime()) != 90*time.Millisecond {
		t.Errorf("first attempt: got outcome %q over %v, want rate_limited over 90ms", got, a1.EndTime().Sub(a1.StartTime()))
	}
	if got, _ := attrOf(a2.Attributes(), "gen_ai.response.time_to_first_chunk"); got != "1" || !a2.EndTime().Equal(srv.EndTime()) {
		t.Errorf("second attempt: got time to first chunk %q ending %v, want 1s, ending with the request", got, a2.EndTime())
	}
	var events []string
	for _, e := range srv.Events() {
		events = append(events, e.Name)
	}
	if got := strings.Join(events, " "); got != "sluice.guardrail sluice.guardrail sluice.restart sluice.cooldown sluice.fallback sluice.commit sluice.redactions" {
		t.Errorf("got events %s", got)
	}
	if in.Overhead != 2*time.Second-90*time.Millisecond-1890*time.Millisecond {
		t.Errorf("got overhead %v, want the request less its attempts", in.Overhead)
	}
}

// Hooks count on the request's Telemetry, with bounded labels.
func TestHooksAndBoundedLabels(t *testing.T) {
	m := newMem(false)
	m.request(t, "a/some-model-a-client-made-up")
	m.check(t, []sumCheck{
		{MetricGuardrails, map[string]int64{"sluice.guardrail=no-secrets,sluice.verdict=block": 1, "sluice.guardrail=no-secrets,sluice.verdict=other": 1}},
		{MetricRestarts, map[string]int64{"sluice.outcome=unavailable,sluice.target=b/y": 1}},
		{MetricCooldowns, map[string]int64{"sluice.target=a/x": 1}},
		{MetricFallbacks, map[string]int64{"sluice.outcome=rate_limited,sluice.target=a/x": 1}},
		{MetricRedactions, map[string]int64{"sluice.detector=aws_access_key": 2}},
		{MetricAttempts, map[string]int64{"sluice.committed=false,sluice.outcome=rate_limited,sluice.target=a/x": 1,
			"sluice.committed=true,sluice.outcome=none,sluice.target=b/y": 1}},
	})
	if got := m.tel.label("a/some-model-a-client-made-up"); got != "a/other" {
		t.Errorf("got label %q, want a/other", got)
	}
	if got := m.tel.label("nope/x"); got != "other" {
		t.Errorf("got label %q, want other", got)
	}
	RedisError(context.Background()) // outside a request: the process's Telemetry, no panic
	RedisError(m.tel.Context(context.Background()))
	if got := m.sum(t, MetricRedisErrors); got[""] != 1 {
		t.Errorf("got redis errors %v, want 1 on the Telemetry the context carries", got)
	}
}

func TestCaptureContent(t *testing.T) {
	m := newMem(true)
	m.request(t, "default")
	srv := m.spans.Ended()[2]
	in, _ := attrOf(srv.Attributes(), "gen_ai.input.messages")
	out, _ := attrOf(srv.Attributes(), "gen_ai.output.messages")
	if in != `[{"role":"user","parts":[{"type":"text","content":"the prompt"}]}]` ||
		out != `[{"role":"assistant","parts":[{"type":"text","content":"the answer"}],"finish_reason":"stop"}]` {
		t.Errorf("got input %s, output %s", in, out)
	}
}

func TestTraceResponse(t *testing.T) {
	m := newMem(false)
	r := httptest.NewRequest("GET", "/v1/models", nil)
	_, rq := m.tel.Start(r.Context(), r, "/v1/models", time.Now())
	if tr := rq.TraceResponse(); len(tr) != 55 || !strings.HasPrefix(tr, "00-") || !strings.HasSuffix(tr, "-01") {
		t.Errorf("got traceresponse %q, want 00-<trace>-<span>-01", tr)
	}
	// The API's no-op tracer records nothing and makes no ids: no header.
	_, rq = New(Options{}).Start(r.Context(), r, "/v1/models", time.Now())
	if tr := rq.TraceResponse(); tr != "" {
		t.Errorf("got traceresponse %q without a tracer, want none", tr)
	}
}

// The hooks of package redisstore's breaker and spool count on the Telemetry the context
// carries: the spooled gauge goes up and down, drops add up, the breaker is 1 while open.
func TestRedisSpoolHooks(t *testing.T) {
	m := newMem(false)
	ctx := m.tel.Context(context.Background())
	UsageSpooled(ctx, 3)
	UsageSpooled(ctx, -1)
	UsageDropped(ctx, 2)
	RedisBreaker(ctx, true)
	RedisBreaker(ctx, false)
	RedisBreaker(ctx, true)
	for name, want := range map[string]int64{MetricUsageSpooled: 2, MetricUsageDropped: 2, MetricRedisBreaker: 1} {
		if got := m.sum(t, name); got[""] != want {
			t.Errorf("%s: got %v, want %d", name, got, want)
		}
	}
}
