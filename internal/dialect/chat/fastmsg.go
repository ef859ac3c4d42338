package chat

import (
	"bytes"
	"unicode/utf8"

	"github.com/sluice-gw/sluice/internal/jsonscan"
	wire "github.com/sluice-gw/sluice/internal/schema/openai"
)

// fastMessage decodes the common message into w without reflection: an object whose members
// are role, content, name and tool_call_id, their strings without escapes, and others it
// does not know (skipped, as encoding/json skips them). Anything else (refusal, tool_calls,
// cache_control, a null content, a name encoding/json would match case-insensitively, an
// escape, invalid UTF-8, a malformed text) answers false, and the caller decodes the message
// with encoding/json; what it decodes, encoding/json decodes the same (FuzzFastMessage). An
// agent's request carries up to hundreds of messages, and encoding/json's reflection was
// 2% of the gateway's CPU on a one-message request (issue 51).
func fastMessage(raw []byte, w *wire.ChatMessage) bool {
	p := jsonscan.New(raw)
	if p.Peek() != '{' {
		return false
	}
	p.Advance()
	for first := true; ; first = false {
		key, end, ok := p.Member(first)
		if !ok {
			return false
		}
		if end {
			break
		}
		var dst *string
		switch string(key) {
		case "role":
			dst = &w.Role
		case "name":
			dst = &w.Name
		case "tool_call_id":
			dst = &w.ToolCallID
		case "content":
			if p.Peek() == 'n' {
				return false
			}
			v, ok := p.Value()
			if !ok {
				return false
			}
			w.Content = v
			continue
		case "refusal", "tool_calls", "cache_control":
			return false
		default:
			if jsonscan.FoldsTo(key, "role", "content", "name", "refusal", "tool_call_id", "tool_calls", "cache_control") {
				return false
			}
			if _, ok := p.Value(); !ok {
				return false
			}
			continue
		}
		if p.Peek() != '"' {
			return false
		}
		s, ok := p.String()
		if !ok {
			return false
		}
		if *dst, ok = plainString(s); !ok {
			return false
		}
	}
	p.WS()
	return p.Done()
}

// plainString is the text of a valid JSON string literal s (quotes included) that holds no
// escape and only valid UTF-8, which is the literal's bytes: false for any other.
func plainString(s []byte) (string, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", false
	}
	in := s[1 : len(s)-1]
	if bytes.IndexByte(in, '\\') >= 0 || bytes.IndexByte(in, '"') >= 0 || !utf8.Valid(in) {
		return "", false
	}
	for _, c := range in {
		if c < 0x20 {
			return "", false
		}
	}
	return string(in), true
}
