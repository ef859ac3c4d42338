package anthropic

import (
	"bytes"
	"encoding/json"

	"github.com/sluice-gw/sluice/internal/llm"
	wire "github.com/sluice-gw/sluice/internal/schema/anthropic"
	"github.com/sluice-gw/sluice/internal/sse"
)

// Block kinds of the stream.
const (
	none = iota
	text
	thinking
	other // tool_use, redacted_thinking: opened and closed at once
)

// stream encodes released events as the Messages stream: each run of text or reasoning is a
// content block, a reasoning block's signature ends it (signature_delta), opaque reasoning
// with no text before it is a redacted_thinking block, and each tool call, released whole,
// is a tool_use block with its input in one input_json_delta. Not safe for concurrent use.
type stream struct {
	ew     *sse.Writer
	id     string
	model  string
	buf    []byte
	cur    int // index of the open block, -1 before the first
	kind   int // what the open block is (none: no block open)
	finish string
	// stop and stopSeq are an Anthropic upstream's own stop reason and matched sequence.
	stop, stopSeq string
}

func (s *stream) start() error {
	m := wire.Message{ID: s.id, Type: "message", Role: "assistant", Model: s.model, Content: []any{}}
	return s.send("message_start", &wire.MessageStartEvent{Type: "message_start", Message: m})
}

func (s *stream) Event(ev *llm.Event) error {
	if ev.Choice != 0 {
		return nil // one choice, as Anthropic answers
	}
	switch ev.Type {
	case llm.EvText, llm.EvRefusal:
		if ev.Text == "" {
			return nil
		}
		if err := s.open(text, &wire.TextBlock{Type: "text"}); err != nil {
			return err
		}
		return s.delta(&wire.TextDelta{Type: "text_delta", Text: ev.Text})
	case llm.EvReasoning:
		return s.reasoning(ev)
	case llm.EvToolCall:
		if err := s.close(); err != nil {
			return err
		}
		s.cur++
		if err := s.send("content_block_start", &wire.ContentBlockStartEvent{Type: "content_block_start", Index: s.cur,
			ContentBlock: &wire.ToolUseBlock{Type: "tool_use", ID: ev.Tool.ID, Name: ev.Tool.Name, Input: json.RawMessage(`{}`)}}); err != nil {
			return err
		}
		s.kind = other
		if args := ev.Tool.Args; args != "" {
			var c bytes.Buffer
			if json.Compact(&c, []byte(args)) == nil {
				args = c.String()
			}
			if err := s.delta(&wire.InputJSONDelta{Type: "input_json_delta", PartialJSON: args}); err != nil {
				return err
			}
		}
		return s.close()
	case llm.EvDone:
		s.finish, s.stop, s.stopSeq = ev.Finish, ev.Stop, ev.StopSequence
		return s.close()
	}
	return nil
}

func (s *stream) reasoning(ev *llm.Event) error {
	if ev.Text != "" {
		if err := s.open(thinking, &wire.ThinkingBlock{Type: "thinking"}); err != nil {
			return err
		}
		if err := s.delta(&wire.ThinkingDelta{Type: "thinking_delta", Thinking: ev.Text}); err != nil {
			return err
		}
	}
	if ev.Encrypted == "" {
		return nil
	}
	if !ev.Redacted {
		// A signature closes a thinking block, one with no text too (display "omitted").
		if err := s.open(thinking, &wire.ThinkingBlock{Type: "thinking"}); err != nil {
			return err
		}
		if err := s.delta(&wire.SignatureDelta{Type: "signature_delta", Signature: ev.Encrypted}); err != nil {
			return err
		}
		return s.close()
	}
	if err := s.close(); err != nil {
		return err
	}
	s.cur++
	s.kind = other
	if err := s.send("content_block_start", &wire.ContentBlockStartEvent{Type: "content_block_start", Index: s.cur,
		ContentBlock: &wire.RedactedThinkingBlock{Type: "redacted_thinking", Data: ev.Encrypted}}); err != nil {
		return err
	}
	return s.close()
}

// open makes sure a block of kind is open, closing another one first.
func (s *stream) open(kind int, start any) error {
	if s.kind == kind {
		return nil
	}
	if err := s.close(); err != nil {
		return err
	}
	s.cur++
	s.kind = kind
	return s.send("content_block_start", &wire.ContentBlockStartEvent{Type: "content_block_start", Index: s.cur, ContentBlock: start})
}

func (s *stream) close() error {
	if s.kind == none {
		return nil
	}
	s.kind = none
	return s.send("content_block_stop", &wire.ContentBlockStopEvent{Type: "content_block_stop", Index: s.cur})
}

func (s *stream) delta(d any) error {
	return s.send("content_block_delta", &wire.ContentBlockDeltaEvent{Type: "content_block_delta", Index: s.cur, Delta: d})
}

func (s *stream) end(u *llm.Usage) error {
	if err := s.close(); err != nil {
		return err
	}
	d := &wire.MessageDeltaEvent{Type: "message_delta", Delta: wire.MessageDelta{StopReason: stopReason(s.finish, s.stop),
		StopSequence: stopSequence(s.stopSeq)},
		Usage: usage(u).Delta()}
	if err := s.send("message_delta", d); err != nil {
		return err
	}
	return s.send("message_stop", &wire.TypeEvent{Type: "message_stop"})
}

func (s *stream) send(event string, v any) error {
	data, err := wire.Marshal(v)
	if err != nil {
		return err
	}
	s.buf = frame(s.buf[:0], event, data)
	return s.ew.Frame(s.buf)
}
