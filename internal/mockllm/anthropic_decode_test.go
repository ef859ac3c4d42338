package mockllm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The Anthropic Messages streaming events in the shapes the API documents
// (https://docs.claude.com/en/docs/build-with-claude/streaming) and the SDKs decode, plain
// encoding/json structs decoded with DisallowUnknownFields: a field the mock invents fails.
// The fields only recordings carry (service_tier, caller, stop_details, ...) are listed so
// that the recorded fixtures decode too, which checks the decoder itself.

type anthEvent struct {
	Type         string            `json:"type"`
	Message      *anthMessage      `json:"message"`
	Index        *int              `json:"index"`
	ContentBlock *anthContentBlock `json:"content_block"`
	Delta        *anthDelta        `json:"delta"`
	Usage        *anthUsage        `json:"usage"`
	Error        *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

type anthMessage struct {
	ID           string             `json:"id"`
	Type         string             `json:"type"`
	Role         string             `json:"role"`
	Model        string             `json:"model"`
	Content      []anthContentBlock `json:"content"`
	StopReason   *string            `json:"stop_reason"`
	StopSequence *string            `json:"stop_sequence"`
	Usage        anthUsage          `json:"usage"`
}

type anthUsage struct {
	InputTokens              *int            `json:"input_tokens"`
	OutputTokens             int             `json:"output_tokens"`
	CacheCreationInputTokens *int            `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int            `json:"cache_read_input_tokens"`
	CacheCreation            json.RawMessage `json:"cache_creation"`
	ServiceTier              string          `json:"service_tier"`
	InferenceGeo             string          `json:"inference_geo"`
}

type anthContentBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Caller    json.RawMessage `json:"caller"`
	Thinking  *string         `json:"thinking"`
	Signature *string         `json:"signature"`
}

type anthDelta struct {
	Type         string          `json:"type"`
	Text         *string         `json:"text"`
	PartialJSON  *string         `json:"partial_json"`
	Thinking     *string         `json:"thinking"`
	Signature    *string         `json:"signature"`
	StopReason   *string         `json:"stop_reason"`
	StopSequence *string         `json:"stop_sequence"`
	StopDetails  json.RawMessage `json:"stop_details"`
}

// anthResult is a stream accumulated the way the SDKs' MessageStream does.
type anthResult struct {
	msg     anthMessage
	blocks  []anthContentBlock // text, thinking and signature accumulated; input is the JSON
	pings   int
	stopped bool   // message_stop came
	errType string // an error event's type
}

// decodeAnthropic checks a stream's grammar (message_start first, blocks opened, filled and
// closed in index order with deltas of their type, message_delta, message_stop last, nothing
// after an error) and accumulates it.
func decodeAnthropic(t *testing.T, events []sseEvent) anthResult {
	t.Helper()
	var r anthResult
	open := -1
	for i, ev := range events {
		var e anthEvent
		dec := json.NewDecoder(strings.NewReader(ev.data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("event %d %q: %v", i, ev.data, err)
		}
		if e.Type != ev.name {
			t.Errorf("event %d: event: %s, data type %s", i, ev.name, e.Type)
		}
		if r.stopped || r.errType != "" {
			t.Errorf("event %d %s after the end of the stream", i, e.Type)
		}
		if (i == 0) != (e.Type == "message_start") {
			t.Fatalf("event %d is %s; want message_start first and only first", i, e.Type)
		}
		switch e.Type {
		case "message_start":
			if e.Message == nil || e.Message.Type != "message" || e.Message.Role != "assistant" || e.Message.ID == "" ||
				len(e.Message.Content) != 0 || e.Message.StopReason != nil || e.Message.Usage.InputTokens == nil {
				t.Errorf("message_start: %s", ev.data)
			}
			if e.Message != nil {
				r.msg = *e.Message
			}
		case "ping":
			r.pings++
		case "content_block_start":
			if open != -1 || e.Index == nil || *e.Index != len(r.blocks) || e.ContentBlock == nil {
				t.Fatalf("content_block_start %s: want index %d, no block open", ev.data, len(r.blocks))
			}
			b := *e.ContentBlock
			if b.Type == "tool_use" {
				if string(b.Input) != "{}" || b.ID == "" || b.Name == "" {
					t.Errorf("tool_use start %s: want id, name and input {}", ev.data)
				}
				b.Input = nil
			}
			r.blocks, open = append(r.blocks, b), *e.Index
		case "content_block_delta":
			if e.Index == nil || *e.Index != open || e.Delta == nil {
				t.Fatalf("content_block_delta %s: block %d is open", ev.data, open)
			}
			b, d := &r.blocks[open], e.Delta
			switch {
			case b.Type == "text" && d.Type == "text_delta" && d.Text != nil:
				*b.Text += *d.Text
			case b.Type == "tool_use" && d.Type == "input_json_delta" && d.PartialJSON != nil:
				b.Input = append(b.Input, *d.PartialJSON...)
			case b.Type == "thinking" && d.Type == "thinking_delta" && d.Thinking != nil:
				*b.Thinking += *d.Thinking
			case b.Type == "thinking" && d.Type == "signature_delta" && d.Signature != nil:
				*b.Signature += *d.Signature
			default:
				t.Errorf("delta %s in a %s block", ev.data, b.Type)
			}
		case "content_block_stop":
			if e.Index == nil || *e.Index != open {
				t.Fatalf("content_block_stop %s: block %d is open", ev.data, open)
			}
			open = -1
		case "message_delta":
			if open != -1 || e.Delta == nil || e.Delta.StopReason == nil || e.Usage == nil {
				t.Fatalf("message_delta %s: want a stop_reason and usage, no block open", ev.data)
			}
			r.msg.StopReason, r.msg.Usage.OutputTokens = e.Delta.StopReason, e.Usage.OutputTokens
			if e.Usage.InputTokens != nil {
				r.msg.Usage.InputTokens = e.Usage.InputTokens
			}
		case "message_stop":
			if r.msg.StopReason == nil {
				t.Errorf("message_stop before message_delta")
			}
			r.stopped = true
		case "error":
			if e.Error == nil {
				t.Fatalf("error event %s: no error object", ev.data)
			}
			r.errType = e.Error.Type
		default:
			t.Errorf("event %d: unknown type %s", i, e.Type)
		}
	}
	return r
}

// TestAnthropicDecoderOnFixtures runs the decoder on the recordings first: what it accepts
// of the mock means something only if it accepts the real API.
func TestAnthropicDecoderOnFixtures(t *testing.T) {
	for _, f := range []string{"anthropic-text.sse", "anthropic-tool-use.sse", "anthropic-thinking.sse",
		"anthropic-text-and-tool-no-args.sse", "anthropic-instream-overloaded-error.sse"} {
		r := decodeAnthropic(t, fixtureEvents(t, f))
		want(t, f+" ended", r.stopped || r.errType != "", true)
	}
}

// blockText is a decoded block as text: "text:Hello", "tool_use:get_weather({...})".
func (r anthResult) blockText() []string {
	var out []string
	for _, b := range r.blocks {
		switch b.Type {
		case "text":
			out = append(out, "text:"+*b.Text)
		case "thinking":
			out = append(out, fmt.Sprintf("thinking:%s signed:%v", *b.Thinking, *b.Signature != ""))
		case "tool_use":
			var v any
			valid := json.Unmarshal(b.Input, &v) == nil
			out = append(out, fmt.Sprintf("tool_use:%s(%s) valid:%v", b.Name, bytes.TrimSpace(b.Input), valid))
		}
	}
	return out
}
