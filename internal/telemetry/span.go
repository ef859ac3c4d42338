package telemetry

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/sluice-gw/sluice/internal/llm"
)

// endSpan sets what the request did on its server span and ends it at end. Nothing is
// computed for a span that is not recorded (no sampler took it).
func (rq *Request) endSpan(in *Access, op string, end time.Time) {
	sp := rq.span
	if !sp.IsRecording() {
		sp.End(trace.WithTimestamp(end))
		return
	}
	attrs := []attribute.KeyValue{semconv.HTTPResponseStatusCode(in.Status), attribute.String("sluice.request.id", in.ID),
		attribute.String("sluice.record.id", in.Record)}
	if in.KeyName != "" || in.KeyID != "" {
		// The key's name and id, never the key.
		attrs = append(attrs, attribute.String("sluice.key.name", in.KeyName), attribute.String("sluice.key.id", in.KeyID))
	}
	if op != "" {
		sp.SetName(op + " " + in.Model) // "{gen_ai.operation.name} {gen_ai.request.model}"
		attrs = append(attrs, semconv.GenAIOperationNameKey.String(op), semconv.GenAIRequestModelKey.String(in.Model),
			semconv.GenAIRequestStreamKey.Bool(in.Stream), attrOutcome.String(in.Kind.String()),
			attribute.Int("sluice.attempts", in.Attempts))
		attrs = append(attrs, requestAttrs(in.Request)...)
		attrs = append(attrs, responseAttrs(in)...)
		if in.Target != "" {
			attrs = append(attrs, attrTarget.String(in.Target), semconv.GenAIProviderNameKey.String(rq.t.provider(in.Target)))
		}
		if in.FirstText > 0 {
			attrs = append(attrs, attribute.Float64("sluice.time_to_first_token", in.FirstText.Seconds()))
		}
		attrs = append(attrs, attribute.Float64("sluice.overhead", in.Overhead.Seconds()))
		if in.CostUSD > 0 {
			attrs = append(attrs, attribute.Float64("sluice.cost_usd", in.CostUSD))
		}
		if rq.t.content {
			attrs = append(attrs, contentAttrs(in)...)
		}
		if len(in.Masks) > 0 {
			// One event with a count per detector: what was masked, never the text.
			ev := make([]attribute.KeyValue, 0, len(in.Masks))
			for _, det := range slices.Sorted(maps.Keys(in.Masks)) {
				ev = append(ev, attribute.Int("sluice.redactions."+det, in.Masks[det]))
			}
			sp.AddEvent("sluice.redactions", trace.WithTimestamp(end), trace.WithAttributes(ev...))
		}
	}
	if failed(in.Kind) { // a client that left is no error of the gateway's: its outcome says so
		attrs = append(attrs, semconv.ErrorTypeKey.String(in.Kind.String()))
	}
	sp.SetAttributes(attrs...)
	// A server span is in error for a 5xx, or an answer that failed after its headers (an
	// in-band error); a 4xx is the client's error, and a client that left is no error.
	if in.Status >= 500 || in.Status < 400 && failed(in.Kind) {
		sp.SetStatus(codes.Error, in.Kind.String())
	}
	sp.End(trace.WithTimestamp(end))
}

// requestAttrs are the sampling options the client set.
func requestAttrs(r *llm.Request) []attribute.KeyValue {
	if r == nil {
		return nil
	}
	var a []attribute.KeyValue
	switch {
	case r.MaxTokens != nil:
		a = append(a, semconv.GenAIRequestMaxTokens(*r.MaxTokens))
	case r.MaxCompletionTokens != nil:
		a = append(a, semconv.GenAIRequestMaxTokens(*r.MaxCompletionTokens))
	}
	if r.Temperature != nil {
		a = append(a, semconv.GenAIRequestTemperature(*r.Temperature))
	}
	if r.TopP != nil {
		a = append(a, semconv.GenAIRequestTopP(*r.TopP))
	}
	if r.N > 1 {
		a = append(a, semconv.GenAIRequestChoiceCount(r.N))
	}
	return a
}

// responseAttrs are the served answer's model, id, finish reasons and usage.
func responseAttrs(in *Access) []attribute.KeyValue {
	var a []attribute.KeyValue
	if r := in.Response; r != nil {
		if r.Model != "" {
			a = append(a, semconv.GenAIResponseModel(r.Model))
		}
		if r.ID != "" {
			a = append(a, semconv.GenAIResponseID(r.ID))
		}
		var reasons []string
		for _, c := range r.Choices {
			if c.Finish != "" {
				reasons = append(reasons, c.Finish)
			}
		}
		if len(reasons) > 0 {
			a = append(a, semconv.GenAIResponseFinishReasons(reasons...))
		}
	}
	if u := in.Usage; u != nil {
		a = append(a, semconv.GenAIUsageInputTokens(u.Prompt), semconv.GenAIUsageOutputTokens(u.Completion),
			semconv.GenAIUsageCacheReadInputTokens(u.Cached), semconv.GenAIUsageCacheCreationInputTokens(u.CacheWrite),
			attribute.Bool("sluice.usage.estimated", u.Estimated))
		if u.CacheWrite1h > 0 { // the conventions have no name for the 1-hour part (issue 46)
			a = append(a, attribute.Int("sluice.usage.cache_creation_1h.input_tokens", u.CacheWrite1h))
		}
	}
	return a
}

// capturedPart and capturedMessage are the GenAI conventions' message shape
// (gen_ai.input.messages, gen_ai.output.messages), text and tool calls only: an image is
// named, never inlined.
type capturedPart struct {
	Type      string `json:"type"`
	Content   string `json:"content,omitempty"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
}

type capturedMessage struct {
	Role         string         `json:"role"`
	Parts        []capturedPart `json:"parts"`
	FinishReason string         `json:"finish_reason,omitempty"`
}

// contentAttrs are the prompt and the answer: only with telemetry.capture_content, and as
// the providers saw them (after the alias's input redaction) and the client got them (after
// output redaction).
func contentAttrs(in *Access) []attribute.KeyValue {
	var a []attribute.KeyValue
	if r := in.Request; r != nil {
		msgs := make([]capturedMessage, 0, len(r.Messages))
		for _, m := range r.Messages {
			cm := capturedMessage{Role: string(m.Role), Parts: []capturedPart{}}
			for _, p := range m.Parts {
				if p.Type == llm.PartText {
					cm.Parts = append(cm.Parts, capturedPart{Type: "text", Content: p.Text})
				} else {
					cm.Parts = append(cm.Parts, capturedPart{Type: string(p.Type)})
				}
			}
			for _, tc := range m.ToolCalls {
				cm.Parts = append(cm.Parts, capturedPart{Type: "tool_call", ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
			}
			if m.ToolCallID != "" {
				cm.Parts = append(cm.Parts, capturedPart{Type: "tool_call_response", ID: m.ToolCallID})
			}
			msgs = append(msgs, cm)
		}
		a = append(a, semconv.GenAIInputMessagesKey.String(encode(msgs)))
	}
	if r := in.Response; r != nil {
		msgs := make([]capturedMessage, 0, len(r.Choices))
		for _, c := range r.Choices {
			cm := capturedMessage{Role: "assistant", Parts: []capturedPart{}, FinishReason: c.Finish}
			if c.Text != "" {
				cm.Parts = append(cm.Parts, capturedPart{Type: "text", Content: c.Text})
			}
			if c.Refusal != "" {
				cm.Parts = append(cm.Parts, capturedPart{Type: "refusal", Content: c.Refusal})
			}
			for _, tc := range c.ToolCalls {
				cm.Parts = append(cm.Parts, capturedPart{Type: "tool_call", ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
			}
			msgs = append(msgs, cm)
		}
		a = append(a, semconv.GenAIOutputMessagesKey.String(encode(msgs)))
	}
	return a
}

func encode(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
