package anthropic

import (
	"context"
	"encoding/json"
	"io"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
	wire "github.com/sluice-gw/sluice/internal/schema/anthropic"
)

// plainStream is the answer of a non-streamed Messages call (llm.Request.Plain) as an
// llm.Stream: its first Recv reads the whole message and queues its events through the
// stream's own code, as message_start, each block's content_block_start (whole) and
// content_block_stop, message_delta and message_stop, so that the relay takes it as it
// takes the stream of the same answer. An error object in a 2xx answer is the error an
// error event would be.
type plainStream struct {
	transport.Body
	msg  message
	q    transport.Queue
	read bool
}

func newPlainStream(ctx context.Context, o origin, body io.ReadCloser) *plainStream {
	return &plainStream{Body: transport.NewBody(ctx, o.name, body), msg: message{origin: o}}
}

// Recv implements llm.Stream.
func (s *plainStream) Recv() (llm.Event, error) { return s.q.Recv(s) }

// BeforeWait implements llm.Waiter: f runs before the one read of the body.
func (s *plainStream) BeforeWait(f func()) { s.OnWait(f) }

// Fill implements transport.Source: the whole answer at the first call, its end at the next.
func (s *plainStream) Fill() error {
	if s.read {
		return io.EOF // message_stop was applied with the answer
	}
	s.read = true
	data, err := s.ReadAll()
	if err != nil {
		return err
	}
	var m struct {
		Type         string           `json:"type"`
		ID           string           `json:"id"`
		Model        string           `json:"model"`
		Content      []wireBlock      `json:"content"`
		StopReason   string           `json:"stop_reason"`
		StopSequence string           `json:"stop_sequence"`
		Usage        *wire.DeltaUsage `json:"usage"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return &llm.Error{Kind: llm.Unavailable, Message: s.msg.name + " answered with something other than a JSON message", Err: err}
	}
	switch {
	case m.Type == "error":
		return s.msg.streamError(parseErrorBody(data))
	case m.Type != "message" || m.StopReason == "":
		return &llm.Error{Kind: llm.Truncated, Message: s.msg.name + ": the answer is not a finished message"}
	}
	evs := []wireEvent{{Type: "message_start", Message: &wireHead{ID: m.ID, Model: m.Model, Usage: m.Usage}}}
	for i := range m.Content {
		evs = append(evs, wireEvent{Type: "content_block_start", Index: i, ContentBlock: &m.Content[i]},
			wireEvent{Type: "content_block_stop", Index: i})
	}
	evs = append(evs, wireEvent{Type: "message_delta", Delta: &wireDelta{StopReason: m.StopReason, StopSequence: m.StopSequence}},
		wireEvent{Type: "message_stop"})
	for i := range evs {
		if err := s.msg.apply(&s.q, &evs[i]); err != nil {
			return err
		}
	}
	return nil
}
