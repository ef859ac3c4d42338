package telemetry

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/sluice-gw/sluice/internal/llm"
)

type requestKey struct{}

// Request is the telemetry of one request in flight: its server span, and whether it is
// counted as an open stream. Start and End run on the request's goroutine; the hooks
// (Guardrail, Restart, ...) may run on any.
type Request struct {
	t      *Telemetry
	span   trace.Span
	stream atomic.Bool
	tools  toolTally // server-side tool invocations (tool.go)
	listed listed    // the verdicts and tool calls, for the request log
}

// maxListed bounds the verdicts and the tool calls a request's record lists.
const maxListed = 64

// listed is what the hooks list of a request: they may run on any goroutine.
type listed struct {
	mu       sync.Mutex
	verdicts []Verdict
	calls    []ToolCall
}

func (l *listed) verdict(v Verdict) {
	l.mu.Lock()
	if len(l.verdicts) < maxListed {
		l.verdicts = append(l.verdicts, v)
	}
	l.mu.Unlock()
}

func (l *listed) call(c ToolCall) {
	l.mu.Lock()
	if len(l.calls) < maxListed {
		l.calls = append(l.calls, c)
	}
	l.mu.Unlock()
}

// copyTo gives in the lists (copies: a run that outlived the request may still add).
func (l *listed) copyTo(in *Access) {
	l.mu.Lock()
	in.Verdicts, in.Calls = slices.Clone(l.verdicts), slices.Clone(l.calls)
	l.mu.Unlock()
}

// TraceID is the request's trace id ("": no trace is recorded).
func (rq *Request) TraceID() string {
	if sc := rq.span.SpanContext(); sc.IsValid() {
		return sc.TraceID().String()
	}
	return ""
}

// Start begins the telemetry of r, which arrived at start and matched route (a route
// pattern, for the span name: never a path with ids in it). The server span is a child of
// the caller's trace when r carries a W3C traceparent. The returned context carries the span
// (so the providers' calls propagate it upstream) and the Request (so hooks find it).
func (t *Telemetry) Start(ctx context.Context, r *http.Request, route string, start time.Time) (context.Context, *Request) {
	ctx = propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(r.Header))
	rq := &Request{t: t}
	name, attrs := r.Method, []attribute.KeyValue{semconv.HTTPRequestMethodKey.String(r.Method), semconv.URLPath(r.URL.Path)}
	if route != "" { // else no route matched: the path may be anything a client sent
		name, attrs = name+" "+route, append(attrs, semconv.HTTPRoute(route))
	}
	ctx, rq.span = t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	return context.WithValue(ctx, requestKey{}, rq), rq
}

// TraceResponse is the W3C traceresponse header value (Trace Context level 2): the trace
// and the gateway's span, so a caller can find the request in its tracing backend; "" when
// no trace is recorded at all.
func (rq *Request) TraceResponse() string {
	sc := rq.span.SpanContext()
	if !sc.IsValid() {
		return ""
	}
	return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + sc.TraceFlags().String()
}

// StreamOpened counts the request as an open event stream until End (once).
func (rq *Request) StreamOpened(ctx context.Context) {
	if !rq.stream.Swap(true) {
		rq.t.inst.openStreams.Add(ctx, 1)
	}
}

// Overhead is the time of the request so far (at now) spent outside calls to providers:
// decoding, keys and limits, waits between attempts, encoding the answer.
func Overhead(in *Access, now time.Time) time.Duration {
	upstream := time.Duration(0)
	for _, a := range in.Tries {
		upstream += attemptEnd(a, now).Sub(a.Start)
	}
	return max(now.Sub(in.Start)-upstream, 0)
}

func attemptEnd(a llm.Attempt, end time.Time) time.Time {
	if a.End.IsZero() || a.End.After(end) {
		return end
	}
	return a.End
}

// End ends the request in: the attempts' child spans, the metrics, the statistics, and the
// server span, whose times come from in (Start, Duration). It sets in.Overhead. ctx is the
// context Start returned.
func (rq *Request) End(ctx context.Context, in *Access) {
	t := rq.t
	end := in.Start.Add(in.Duration)
	if rq.stream.Load() {
		t.inst.openStreams.Add(ctx, -1)
	}
	rq.toolCounts(in)
	rq.listed.copyTo(in)
	in.Overhead = max(Overhead(in, end)-in.ToolTime, 0) // a tool's time is not the gateway's
	op := operation(in)
	fallbacks := rq.attempts(ctx, in, op, end)
	if op != "" {
		alias := t.label(in.Model)
		common := []attribute.KeyValue{semconv.GenAIOperationNameKey.String(op), semconv.GenAIRequestModelKey.String(alias)}
		attrs := append(common[:len(common):len(common)], attrStream.Bool(in.Stream))
		if in.Target != "" {
			attrs = append(attrs, semconv.GenAIProviderNameKey.String(t.provider(in.Target)))
		}
		if failed(in.Kind) {
			attrs = append(attrs, semconv.ErrorTypeKey.String(in.Kind.String()))
		}
		t.inst.serverDuration.Record(ctx, in.Duration.Seconds(), t.sets.opt(attrs...).rec...)
		if in.Stream && in.FirstText > 0 {
			t.inst.ttft.Record(ctx, in.FirstText.Seconds(), t.sets.opt(common...).rec...)
		}
		t.inst.overhead.Record(ctx, in.Overhead.Seconds(), t.sets.opt(common...).rec...)
		for det, n := range in.Masks {
			t.inst.redactions.Add(ctx, int64(n), t.sets.opt(attrDetector.String(det)).add...)
		}
		s := Sample{Error: failed(in.Kind), Fallbacks: fallbacks, Duration: in.Duration, Cache: in.Cache}
		if in.Stream {
			s.TTFT = in.FirstText
		}
		t.stats.Record(alias, t.label(in.Target), s)
	}
	rq.endSpan(in, op, end)
	if in.TraceID = rq.TraceID(); t.record != nil && in.Wire != "" {
		t.record(in)
	}
}

// operation is the gen_ai.operation.name of a model call; "" for any other request.
func operation(in *Access) string {
	switch {
	case in.Model == "":
		return ""
	case strings.HasSuffix(in.Path, "/embeddings"):
		return "embeddings"
	}
	return "chat"
}

// failed reports an answer that failed; a client that left did not fail.
func failed(kind llm.Kind) bool { return kind != llm.KindNone && kind != llm.Canceled }

// attempts records one child span and the client metrics per call of a target, after the
// fact (the chain needs no telemetry of its own), and the commit and fallback events of the
// server span. It returns how many times the chain moved on to another target.
func (rq *Request) attempts(ctx context.Context, in *Access, op string, end time.Time) int {
	t := rq.t
	fallbacks := 0
	for i, a := range in.Tries {
		aEnd := attemptEnd(a, end)
		kind := a.Kind
		if i == len(in.Tries)-1 && a.Kind == llm.KindNone && in.Kind != llm.KindNone {
			kind = in.Kind // the served attempt ended with the request: the client left, ...
		}
		outcome := kind.String()
		target := t.label(a.Target)
		t.inst.attempts.Add(ctx, 1, t.sets.opt(attrTarget.String(target), attrOutcome.String(outcome),
			attrCommitted.Bool(a.Committed)).add...)
		_, model, _ := strings.Cut(a.Target, "/")
		common := []attribute.KeyValue{semconv.GenAIOperationNameKey.String(cmpOr(op, "chat")),
			semconv.GenAIProviderNameKey.String(t.provider(a.Target)), semconv.GenAIRequestModelKey.String(target)}
		attrs := common[:len(common):len(common)] // appending copies: common stays as it is
		if failed(kind) {
			attrs = append(attrs, semconv.ErrorTypeKey.String(outcome))
		}
		t.inst.clientDuration.Record(ctx, aEnd.Sub(a.Start).Seconds(), t.sets.opt(attrs...).rec...)
		if a.Committed {
			t.inst.ttfc.Record(ctx, a.FirstEvent.Seconds(), t.sets.opt(common...).rec...)
			if rq.span.IsRecording() { // an event's options cost allocations a no-op AddEvent drops
				rq.span.AddEvent("sluice.commit", trace.WithTimestamp(a.Start.Add(a.FirstEvent)),
					trace.WithAttributes(attrTarget.String(a.Target), semconv.GenAIResponseTimeToFirstChunk(a.FirstEvent.Seconds())))
			}
		}
		if i == len(in.Tries)-1 && a.Committed && in.Usage != nil && a.Target == in.Target {
			c := common[:len(common):len(common)]
			t.inst.tokens.Record(ctx, int64(in.Usage.Prompt), t.sets.opt(append(c, semconv.GenAITokenTypeInput)...).rec...)
			t.inst.tokens.Record(ctx, int64(in.Usage.Completion), t.sets.opt(append(c, semconv.GenAITokenTypeOutput)...).rec...)
			t.cacheTokens(ctx, c, in.Usage)
		}
		if i+1 < len(in.Tries) && in.Tries[i+1].Target != a.Target {
			fallbacks++
			t.inst.fallbacks.Add(ctx, 1, t.sets.opt(attrTarget.String(target), attrOutcome.String(outcome)).add...)
			rq.span.AddEvent("sluice.fallback", trace.WithTimestamp(aEnd), trace.WithAttributes(
				attrTarget.String(a.Target), attrOutcome.String(outcome), attribute.String("sluice.next_target", in.Tries[i+1].Target)))
		}
		if !rq.span.IsRecording() {
			continue
		}
		sattrs := []attribute.KeyValue{semconv.GenAIOperationNameKey.String(cmpOr(op, "chat")),
			semconv.GenAIProviderNameKey.String(t.provider(a.Target)), semconv.GenAIRequestModelKey.String(model),
			attrTarget.String(a.Target), attrOutcome.String(outcome), attrCommitted.Bool(a.Committed)}
		if a.Status != 0 {
			sattrs = append(sattrs, semconv.HTTPResponseStatusCode(a.Status))
		}
		if a.Committed {
			sattrs = append(sattrs, semconv.GenAIResponseTimeToFirstChunk(a.FirstEvent.Seconds()))
		}
		if failed(kind) {
			sattrs = append(sattrs, semconv.ErrorTypeKey.String(outcome))
			if a.Reason != "" {
				sattrs = append(sattrs, attribute.String("sluice.reason", a.Reason)) // secret-free (llm.Attempt)
			}
		}
		_, sp := t.tracer.Start(ctx, cmpOr(op, "chat")+" "+model, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithTimestamp(a.Start), trace.WithAttributes(sattrs...))
		if failed(kind) {
			sp.SetStatus(codes.Error, outcome)
		}
		sp.End(trace.WithTimestamp(aEnd))
	}
	return fallbacks
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
