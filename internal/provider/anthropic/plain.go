package anthropic

import (
	"context"
	"encoding/json"
	"io"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
	wire "github.com/sluice-gw/sluice/internal/schema/anthropic"
)

// newPlainStream is the answer of a non-streamed Messages call (llm.Request.Plain) as an
// llm.Stream: the whole message goes through the stream's own code as message_start, each
// block's content_block_start (whole) and content_block_stop, message_delta and
// message_stop, so that the relay takes it as the stream of the same answer. An error
// object in a 2xx answer is the error an error event would be. dropped is the request's
// breakpoints the adapter left out, reported in the usage.
func newPlainStream(ctx context.Context, o origin, body io.ReadCloser, dropped int) *transport.Plain {
	m := &message{origin: o, dropped: dropped}
	return transport.NewPlain(ctx, o.name, body, func(data []byte, q *transport.Queue) error { return m.plain(data, q) })
}

// plain queues the events of data, a whole Messages answer.
func (m *message) plain(data []byte, q *transport.Queue) error {
	var a struct {
		Type         string           `json:"type"`
		ID           string           `json:"id"`
		Model        string           `json:"model"`
		Content      []wireBlock      `json:"content"`
		StopReason   string           `json:"stop_reason"`
		StopSequence string           `json:"stop_sequence"`
		Usage        *wire.DeltaUsage `json:"usage"`
	}
	if err := json.Unmarshal(data, &a); err != nil {
		return &llm.Error{Kind: llm.Unavailable, Message: m.name + " answered with something other than a JSON message", Err: err}
	}
	switch {
	case a.Type == "error":
		return m.streamError(parseErrorBody(data))
	case a.Type != "message" || a.StopReason == "":
		return &llm.Error{Kind: llm.Truncated, Message: m.name + ": the answer is not a finished message"}
	}
	evs := []wireEvent{{Type: "message_start", Message: &wireHead{ID: a.ID, Model: a.Model, Usage: a.Usage}}}
	for i := range a.Content {
		evs = append(evs, wireEvent{Type: "content_block_start", Index: i, ContentBlock: &a.Content[i]},
			wireEvent{Type: "content_block_stop", Index: i})
	}
	evs = append(evs, wireEvent{Type: "message_delta", Delta: &wireDelta{StopReason: a.StopReason, StopSequence: a.StopSequence}},
		wireEvent{Type: "message_stop"})
	for i := range evs {
		if err := m.apply(q, &evs[i]); err != nil {
			return err
		}
	}
	return nil
}
