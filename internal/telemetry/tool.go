package telemetry

import (
	"context"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// Tool outcomes: the values ToolRun.Outcome takes (any other is counted as "error").
const (
	ToolOK       = "ok"       // the tool answered with a result
	ToolError    = "error"    // it answered with an error, or could not be reached
	ToolTimeout  = "timeout"  // it ran out of its timeout
	ToolLiveness = "liveness" // a streaming tool went silent for longer than its liveness
	ToolCanceled = "canceled" // the run was stopped or interrupted meanwhile
)

// MetricToolDuration is the duration of server-side tool invocations (DESIGN §8).
const MetricToolDuration = "sluice.tool.duration"

var (
	attrTool    = attribute.Key("sluice.tool")     // the configured tool or MCP server name
	attrKeyName = attribute.Key("sluice.key.name") // the caller's virtual key's name, never the key
)

// ToolRun is one invocation of a server-side tool, recorded once it ended.
type ToolRun struct {
	Name   string // what the model called (gen_ai.tool.name): "lookup", "server__tool"
	Label  string // the configured name (the tool's, or its MCP server's): the metric label
	CallID string // the model's tool call id (span only: unbounded)
	// Tool, when set, is a metric label too: the MCP gateway's server__tool (bounded by the
	// servers' filtered lists). Key names the caller's key on the span ("": none).
	Tool, Key string
	Start     time.Time
	Duration  time.Duration
	Outcome   string
}

// toolTally counts a request's tool invocations for its access line.
type toolTally struct {
	calls, errors, nanos atomic.Int64
}

// Tool records an invocation of a server-side tool: the sluice.tool.duration histogram
// (labels: the configured name and the outcome, both bounded), an execute_tool span under
// the request's span (the GenAI conventions' tool span), and the counts of the request's
// access line. A run that outlived its request (the client left) still records the metric
// and the span; its access line was already written.
func Tool(ctx context.Context, r ToolRun) {
	switch r.Outcome {
	case ToolOK, ToolError, ToolTimeout, ToolLiveness, ToolCanceled:
	default:
		r.Outcome = ToolError
	}
	t := from(ctx)
	labels := []attribute.KeyValue{attrTool.String(r.Label), attrOutcome.String(r.Outcome)}
	if r.Tool != "" {
		labels = append(labels, semconv.GenAIToolName(r.Tool))
	}
	t.inst.toolDuration.Record(ctx, r.Duration.Seconds(), metric.WithAttributes(labels...))
	if rq, ok := ctx.Value(requestKey{}).(*Request); ok {
		rq.listed.call(ToolCall{Name: r.Name, Server: r.Label, Duration: r.Duration, Outcome: r.Outcome})
		rq.tools.calls.Add(1)
		rq.tools.nanos.Add(int64(r.Duration))
		if r.Outcome != ToolOK {
			rq.tools.errors.Add(1)
		}
	}
	if !trace.SpanFromContext(ctx).IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(r.Name),
		semconv.GenAIToolCallID(r.CallID), semconv.GenAIToolType("extension"), attrTool.String(r.Label),
		attrOutcome.String(r.Outcome)}
	if r.Outcome != ToolOK {
		attrs = append(attrs, semconv.ErrorTypeKey.String(r.Outcome))
	}
	if r.Key != "" {
		attrs = append(attrs, attrKeyName.String(r.Key))
	}
	_, sp := t.tracer.Start(ctx, "execute_tool "+r.Name, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(r.Start), trace.WithAttributes(attrs...))
	if r.Outcome != ToolOK {
		sp.SetStatus(codes.Error, r.Outcome)
	}
	sp.End(trace.WithTimestamp(r.Start.Add(r.Duration)))
}

// toolCounts copies the request's tool counts into its access record.
func (rq *Request) toolCounts(in *Access) {
	in.Tools, in.ToolErrors = int(rq.tools.calls.Load()), int(rq.tools.errors.Load())
	in.ToolTime = time.Duration(rq.tools.nanos.Load())
}
