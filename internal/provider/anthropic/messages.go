package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sluice-gw/sluice/internal/llm"
	wire "github.com/sluice-gw/sluice/internal/schema/anthropic"
)

// translateMessages turns Chat messages into the system prompt and the alternating turns the
// Messages API requires: system and developer messages become the system prompt, tool results
// become tool_result blocks of a user turn, and adjacent messages of the same role are merged
// into one turn. keep says which breakpoints go as cache_control.
func translateMessages(msgs []llm.Message, keep marks) (wire.Content, []wire.MessageParam, error) {
	var system wire.Content
	var turns []wire.MessageParam
	for i := range msgs {
		m := &msgs[i]
		var role string
		var blocks wire.Content
		var err error
		switch m.Role {
		case llm.RoleSystem, llm.RoleDeveloper:
			// Anthropic has one system prompt, before the conversation: a system message in
			// the middle of it moves there too, in order.
			for _, p := range m.Parts {
				if p.Type == llm.PartText && p.Text != "" {
					system = append(system, wire.Block{Type: "text", Text: p.Text, CacheControl: keep.cc(p.Cache)})
				}
			}
			continue
		case llm.RoleUser:
			role = "user"
			blocks, err = userBlocks(m.Parts, i, keep)
		case llm.RoleTool:
			role = "user"
			var c wire.Content
			c, err = userBlocks(m.Parts, i, keep)
			blocks = wire.Content{{Type: "tool_result", ToolUseID: toolID(m.ToolCallID), Content: c, CacheControl: keep.cc(m.Cache)}}
		case llm.RoleAssistant:
			role = "assistant"
			blocks, err = assistantBlocks(m, i, keep)
		default:
			return nil, nil, invalid("messages", "messages[%d]: role %q has no Anthropic equivalent", i, m.Role)
		}
		if err != nil {
			return nil, nil, err
		}
		if len(blocks) == 0 {
			continue // an empty turn is an API error; dropping it loses nothing
		}
		if n := len(turns); n > 0 && turns[n-1].Role == role {
			turns[n-1].Content = append(turns[n-1].Content, blocks...)
		} else {
			turns = append(turns, wire.MessageParam{Role: role, Content: blocks})
		}
	}
	for i := range turns {
		if turns[i].Role == "user" {
			// "tool_result blocks must come first in the content array" of their user turn
			// (Anthropic, tool use: handling results); a stable sort keeps the rest in order.
			slices.SortStableFunc(turns[i].Content, func(a, b wire.Block) int {
				return boolInt(b.Type == "tool_result") - boolInt(a.Type == "tool_result")
			})
		}
	}
	if len(turns) == 0 {
		return nil, nil, invalid("messages", "the Messages API needs at least one user or assistant message with content")
	}
	return system, turns, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// userBlocks translates the parts of a user or tool message. Empty text parts are left out:
// the API refuses empty text blocks.
func userBlocks(parts []llm.Part, i int, keep marks) (wire.Content, error) {
	var c wire.Content
	for _, p := range parts {
		var b wire.Block
		var err error
		switch p.Type {
		case llm.PartImage:
			b, err = imageBlock(p.URL, i)
		case llm.PartFile:
			b, err = documentBlock(&p, i)
		case llm.PartAudio:
			return nil, llm.PartError("anthropic", i, &p, "the Messages API takes no audio input")
		default:
			if p.Text == "" {
				continue
			}
			b = wire.Block{Type: "text", Text: p.Text}
		}
		if err != nil {
			return nil, err
		}
		b.CacheControl = keep.cc(p.Cache)
		c = append(c, b)
	}
	return c, nil
}

// documentBlock is a file part as a document block: a PDF as a base64 or url source, a
// plain-text file as a text source (its name the title). Anthropic reads no other kind of
// file, and no file another provider stores: those are Unsupported.
func documentBlock(p *llm.Part, i int) (wire.Block, error) {
	b := wire.Block{Type: "document", Title: p.Filename}
	switch {
	case p.FileID != "":
		return b, llm.PartError("anthropic", i, p, "only "+p.FileOf+" targets can read it")
	case p.MediaType == "application/pdf" && p.Data != "":
		b.Source = &wire.Source{Type: "base64", MediaType: p.MediaType, Data: p.Data}
	case p.MediaType == "application/pdf" && (strings.HasPrefix(p.URL, "https://") || strings.HasPrefix(p.URL, "http://")):
		b.Source = &wire.Source{Type: "url", URL: p.URL}
	case p.MediaType == "text/plain" && p.Data != "":
		text, err := base64.StdEncoding.DecodeString(p.Data)
		if err != nil || !utf8.Valid(text) {
			return b, invalid("messages", "messages[%d]: a text/plain file must be base64 of UTF-8 text", i)
		}
		b.Source = &wire.Source{Type: "text", MediaType: p.MediaType, Data: string(text)}
	default:
		return b, llm.PartError("anthropic", i, p, "the Messages API reads PDFs and plain text (by bytes; PDFs by http(s) URL too)")
	}
	return b, nil
}

// imageBlock is an image part as a URL source, or a base64 source for a data: URL (RFC 2397).
// The detail hint has no Anthropic equivalent and is dropped.
func imageBlock(u string, i int) (wire.Block, error) {
	if len(u) < 5 || !strings.EqualFold(u[:5], "data:") {
		return wire.Block{Type: "image", Source: &wire.Source{Type: "url", URL: u}}, nil
	}
	meta, data, ok := strings.Cut(u[5:], ",")
	if !ok || len(meta) < 7 || !strings.EqualFold(meta[len(meta)-7:], ";base64") {
		return wire.Block{}, invalid("messages", "messages[%d]: an image data: URL must be base64-encoded", i)
	}
	mt, _, _ := strings.Cut(meta[:len(meta)-7], ";")
	if mt == "" {
		return wire.Block{}, invalid("messages", "messages[%d]: an image data: URL must name its media type", i)
	}
	return wire.Block{Type: "image", Source: &wire.Source{Type: "base64", MediaType: strings.ToLower(mt), Data: data}}, nil
}

// assistantBlocks translates an assistant message: its reasoning first (the API wants thinking
// blocks before the rest of the turn), then text, refusal and tool calls.
func assistantBlocks(m *llm.Message, i int, keep marks) (wire.Content, error) {
	var c wire.Content
	for _, r := range m.Reasoning {
		switch {
		case r.Encrypted == "" || !r.ReadBy("anthropic"):
			// Thinking without its signature cannot be handed back (the API checks it);
			// reasoning another provider wrote is dropped here.
		case r.Redacted:
			// A Claude thinking block may have empty text and a signature (display
			// "omitted"): it stays a thinking block.
			c = append(c, wire.Block{Type: "redacted_thinking", Data: r.Encrypted})
		default:
			c = append(c, wire.Block{Type: "thinking", Thinking: r.Text, Signature: r.Encrypted})
		}
	}
	for _, p := range m.Parts {
		if p.Type == llm.PartText && p.Text != "" {
			c = append(c, wire.Block{Type: "text", Text: p.Text, CacheControl: keep.cc(p.Cache)})
		}
	}
	if m.Refusal != "" {
		c = append(c, wire.Block{Type: "text", Text: m.Refusal})
	}
	for j, tc := range m.ToolCalls {
		in, err := toolInput(tc.Arguments)
		if err != nil {
			return nil, invalid("messages", "messages[%d].tool_calls[%d].function.arguments: %v", i, j, err)
		}
		c = append(c, wire.Block{Type: "tool_use", ID: toolID(tc.ID), Name: tc.Name, Input: in, CacheControl: keep.cc(tc.Cache)})
	}
	return c, nil
}

// toolInput is a call's arguments as the tool_use input object. Empty arguments are an empty
// object (some clients send "" for a call without arguments); anything else must be a JSON
// object, which a call cut off by max_tokens is not.
func toolInput(args string) (json.RawMessage, error) {
	if strings.TrimSpace(args) == "" {
		return json.RawMessage(`{}`), nil
	}
	if !json.Valid([]byte(args)) {
		return nil, errors.New("not valid JSON; Anthropic takes tool input as a JSON object")
	}
	var b bytes.Buffer
	json.Compact(&b, []byte(args)) // cannot fail: valid above
	if b.Bytes()[0] != '{' {
		return nil, errors.New("not a JSON object; Anthropic takes tool input as a JSON object")
	}
	return b.Bytes(), nil
}

// toolID makes a tool call id acceptable to Anthropic (^[a-zA-Z0-9_-]+$): ids other providers
// minted may hold other characters. The mapping is the same for the tool_use and its
// tool_result, so they still pair.
func toolID(id string) string {
	ok := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
	}
	if strings.IndexFunc(id, func(r rune) bool { return !ok(r) }) < 0 {
		return id
	}
	return strings.Map(func(r rune) rune {
		if ok(r) {
			return r
		}
		return '_'
	}, id)
}
