package anthropic

import (
	"encoding/json"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/llm"
	wire "github.com/sluice-gw/sluice/internal/schema/anthropic"
	"github.com/sluice-gw/sluice/internal/sse"
)

// Sink is what the relay writes a round to (dialect.Sink).
type Sink = dialect.Sink

var _ dialect.Wire = (*Wire)(nil)

// Keepalive is the stream's heartbeat while the chain holds back: the ping event Anthropic
// sends, which its SDKs skip.
var Keepalive = []byte("event: ping\ndata: {\"type\":\"ping\"}\n\n")

// Wire is the Messages wire of one request: message_start ... message_stop, the error event,
// the Message body.
type Wire struct {
	id   string
	sink *stream
}

// NewWire is the wire of one request; id is the message's ("msg_...").
func NewWire(id string) *Wire { return &Wire{id: id} }

// Open sends message_start for the served model on ew and returns the sink the round is
// relayed to.
func (w *Wire) Open(ew *sse.Writer, model string) (Sink, error) {
	w.sink = &stream{ew: ew, id: w.id, model: model, cur: -1}
	return w.sink, w.sink.start()
}

// End closes the last block and sends message_delta, with the stop reason and the usage, and
// message_stop after a complete round.
func (w *Wire) End(u *llm.Usage) error {
	if w.sink == nil {
		return dialect.ErrNotOpen
	}
	return w.sink.end(u)
}

// Fail sends the error event, after which the stream ends; Open may not have been called (the
// chain failed after a keepalive had sent the headers).
func (w *Wire) Fail(ew *sse.Writer, err error) error {
	body := ErrorBody(err, inbandType(err))
	return ew.Frame(frame(nil, "error", body))
}

// Attempt is the sink of one attempt of a non-streamed answer: the relay keeps the complete
// response, so it writes nothing.
func (w *Wire) Attempt(string) Sink { return discard{} }

type discard struct{}

func (discard) Event(*llm.Event) error { return nil }

// Body is the Message of a complete non-streamed answer served by model: its thinking
// blocks, text and tool_use blocks, in that order.
func (w *Wire) Body(model string, resp *llm.Response) []byte {
	m := wire.Message{ID: w.id, Type: "message", Role: "assistant", Model: model, Content: []any{}, Usage: usage(&resp.Usage)}
	finish, stop := "", ""
	if len(resp.Choices) > 0 {
		ch := &resp.Choices[0]
		finish, stop = ch.Finish, ch.Stop
		m.StopSequence = stopSequence(ch.StopSequence)
		for _, r := range ch.Opaque {
			if r.Redacted {
				m.Content = append(m.Content, wire.RedactedThinkingBlock{Type: "redacted_thinking", Data: r.Encrypted})
			} else {
				m.Content = append(m.Content, wire.ThinkingBlock{Type: "thinking", Thinking: r.Text, Signature: r.Encrypted})
			}
		}
		if len(ch.Opaque) == 0 && ch.Reasoning != "" {
			m.Content = append(m.Content, wire.ThinkingBlock{Type: "thinking", Thinking: ch.Reasoning})
		}
		if t := ch.Text + ch.Refusal; t != "" {
			m.Content = append(m.Content, wire.TextBlock{Type: "text", Text: t})
		}
		for _, tc := range ch.ToolCalls {
			m.Content = append(m.Content, wire.ToolUseBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: input(tc.Arguments)})
		}
	}
	r := stopReason(finish, stop)
	m.StopReason = &r
	b, _ := wire.Marshal(&m)
	return b
}

// usage is llm's usage in Anthropic's terms, whatever target served: input_tokens leave out
// the cache's tokens, which llm counts in the prompt; cache_creation splits the cache writes
// by TTL (the 1h ones, the rest 5m), only when there were any: a target that reports no
// writes does not say which TTL it would have used.
func usage(u *llm.Usage) wire.Usage {
	w := wire.Usage{InputTokens: max(u.PromptTokens-u.CachedTokens-u.CacheWriteTokens, 0),
		CacheCreationInputTokens: u.CacheWriteTokens, CacheReadInputTokens: u.CachedTokens, OutputTokens: u.CompletionTokens}
	if u.CacheWriteTokens > 0 {
		long := min(u.CacheWrite1hTokens, u.CacheWriteTokens)
		w.CacheCreation = &wire.CacheCreation{Ephemeral5mInputTokens: u.CacheWriteTokens - long, Ephemeral1hInputTokens: long}
	}
	return w
}

// stopReason is Anthropic's stop_reason: an Anthropic upstream's own (stop, which says more
// than finish: stop_sequence, pause_turn), else the Chat finish reason mapped back.
func stopReason(finish, stop string) string {
	if stop != "" {
		return stop
	}
	switch finish {
	case "length":
		return "max_tokens"
	case "tool_calls":
		return "tool_use"
	case "content_filter":
		return "refusal"
	}
	return "end_turn"
}

// stopSequence is the stop_sequence member: the sequence that matched, null for none.
func stopSequence(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// input is a call's arguments as a tool_use input: the JSON object, or {} for arguments
// that are empty or not an object (a call cut by max_tokens).
func input(args string) json.RawMessage {
	var v map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &v) != nil {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(args)
}

// frame appends one event: its event: line and its data.
func frame(b []byte, event string, data []byte) []byte {
	b = append(b, "event: "...)
	b = append(b, event...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}
