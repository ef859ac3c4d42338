package bedrock

import (
	"context"
	"encoding/json"
	"io"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
	"github.com/sluice-gw/sluice/internal/schema/bedrock"
)

// converse is the adapter's view of a Converse answer (POST /model/{id}/converse).
type converse struct {
	Output struct {
		Message struct {
			Content []struct {
				Text    *string `json:"text"`
				ToolUse *struct {
					ToolUseID string          `json:"toolUseId"`
					Name      string          `json:"name"`
					Input     json.RawMessage `json:"input"`
				} `json:"toolUse"`
				ReasoningContent *struct {
					ReasoningText *struct {
						Text      string `json:"text"`
						Signature string `json:"signature"`
					} `json:"reasoningText"`
					RedactedContent []byte `json:"redactedContent"`
				} `json:"reasoningContent"`
			} `json:"content"`
		} `json:"message"`
	} `json:"output"`
	StopReason string         `json:"stopReason"`
	Usage      *bedrock.Usage `json:"usage"`
}

// newPlainStream is the answer of a non-streamed Converse call (llm.Request.Plain) as an
// llm.Stream: the whole answer goes through the stream's own code as the frames of the same
// answer (messageStart, each block's start, delta and stop, messageStop, metadata), so that
// the relay takes it as the stream.
// dropped is the request's cache breakpoints left out, for the usage.
func newPlainStream(ctx context.Context, o origin, id, model string, dropped int, body io.ReadCloser) *transport.Plain {
	m := &message{origin: o, id: id, model: model, dropped: dropped}
	return transport.NewPlain(ctx, o.name, body, func(data []byte, q *transport.Queue) error { return m.plain(data, q) })
}

// plain queues the events of data, a whole Converse answer.
func (m *message) plain(data []byte, q *transport.Queue) error {
	var c converse
	if err := json.Unmarshal(data, &c); err != nil {
		return &llm.Error{Kind: llm.Unavailable, Message: m.name + " answered with something other than a JSON Converse answer", Err: err}
	}
	if c.StopReason == "" {
		return &llm.Error{Kind: llm.Truncated, Message: m.name + ": the answer has no stopReason"}
	}
	type frame struct {
		typ string
		v   any
	}
	frames := []frame{{bedrock.EventMessageStart, map[string]string{"role": "assistant"}}}
	for i, b := range c.Output.Message.Content {
		var delta map[string]any
		switch {
		case b.Text != nil:
			delta = map[string]any{"text": *b.Text}
		case b.ToolUse != nil:
			frames = append(frames, frame{bedrock.EventContentBlockStart, map[string]any{"contentBlockIndex": i,
				"start": map[string]any{"toolUse": map[string]string{"toolUseId": b.ToolUse.ToolUseID, "name": b.ToolUse.Name}}}})
			if in := b.ToolUse.Input; len(in) > 0 && string(in) != "null" {
				delta = map[string]any{"toolUse": map[string]string{"input": string(in)}}
			}
		case b.ReasoningContent != nil:
			r := map[string]any{}
			if t := b.ReasoningContent.ReasoningText; t != nil {
				r["text"], r["signature"] = t.Text, t.Signature
			}
			if len(b.ReasoningContent.RedactedContent) > 0 {
				r["redactedContent"] = b.ReasoningContent.RedactedContent
			}
			delta = map[string]any{"reasoningContent": r}
		}
		if delta != nil {
			frames = append(frames, frame{bedrock.EventContentBlockDelta, map[string]any{"contentBlockIndex": i, "delta": delta}})
		}
		frames = append(frames, frame{bedrock.EventContentBlockStop, map[string]any{"contentBlockIndex": i}})
	}
	frames = append(frames, frame{bedrock.EventMessageStop, map[string]string{"stopReason": c.StopReason}})
	if c.Usage != nil {
		frames = append(frames, frame{bedrock.EventMetadata, map[string]any{"usage": c.Usage}})
	}
	for _, f := range frames {
		payload, _ := json.Marshal(f.v) // maps of strings, numbers and raw JSON: cannot fail
		if err := m.event(q, f.typ, payload); err != nil {
			return err
		}
	}
	if !m.finished {
		m.finish(q) // no usage: the stream would end the same at the body's end
	}
	return nil
}
