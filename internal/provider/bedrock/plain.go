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

// plainStream is the answer of a non-streamed Converse call (llm.Request.Plain) as an
// llm.Stream: its first Recv reads the whole answer and queues its events through the
// stream's own code, as the frames of the same answer (messageStart, each block's start,
// delta and stop, messageStop, metadata), so that the relay takes it as the stream.
type plainStream struct {
	transport.Body
	msg  message
	q    transport.Queue
	read bool
}

func newPlainStream(ctx context.Context, o origin, id, model string, body io.ReadCloser) *plainStream {
	return &plainStream{Body: transport.NewBody(ctx, o.name, body), msg: message{origin: o, id: id, model: model}}
}

// Recv implements llm.Stream.
func (s *plainStream) Recv() (llm.Event, error) { return s.q.Recv(s) }

// BeforeWait implements llm.Waiter: f runs before the one read of the body.
func (s *plainStream) BeforeWait(f func()) { s.OnWait(f) }

// Fill implements transport.Source: the whole answer and its end at the first call.
func (s *plainStream) Fill() error {
	if s.read {
		return io.EOF
	}
	s.read = true
	data, err := s.ReadAll()
	if err != nil {
		return err
	}
	var c converse
	if err := json.Unmarshal(data, &c); err != nil {
		return &llm.Error{Kind: llm.Unavailable, Message: s.msg.name + " answered with something other than a JSON Converse answer", Err: err}
	}
	if c.StopReason == "" {
		return &llm.Error{Kind: llm.Truncated, Message: s.msg.name + ": the answer has no stopReason"}
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
		if err := s.msg.event(&s.q, f.typ, payload); err != nil {
			return err
		}
	}
	if !s.msg.finished {
		s.msg.finish(&s.q) // no usage: the stream would end the same at the body's end
	}
	return io.EOF
}
