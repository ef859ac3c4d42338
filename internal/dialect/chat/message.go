package chat

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
	wire "github.com/sluice-gw/sluice/internal/schema/openai"
)

func (cr *Request) messages(raw json.RawMessage) error {
	msgs, err := oai.Elements(raw)
	if err != nil {
		return oai.TypeErr("messages", "an array of message objects")
	}
	cr.Req.Messages = make([]llm.Message, 0, len(msgs))
	for i, m := range msgs {
		msg, err := decodeMessage(i, m)
		if err != nil {
			return err
		}
		cr.Req.Messages = append(cr.Req.Messages, msg)
	}
	return nil
}

func decodeMessage(i int, raw json.RawMessage) (llm.Message, error) {
	p := "messages[" + strconv.Itoa(i) + "]"
	var w wire.ChatMessage
	if !fastMessage(raw, &w) {
		w = wire.ChatMessage{}
		if err := json.Unmarshal(raw, &w); err != nil {
			return llm.Message{}, oai.Invalid(p, "Invalid type for '%s': expected a message object with string fields.", p)
		}
	}
	m := llm.Message{Role: llm.Role(w.Role), Name: w.Name, ToolCallID: w.ToolCallID}
	switch m.Role {
	case llm.RoleSystem, llm.RoleDeveloper, llm.RoleUser, llm.RoleAssistant, llm.RoleTool:
	case "":
		return m, oai.Invalid(p+".role", "Missing required parameter: '%s.role'.", p)
	default:
		return m, oai.Invalid(p+".role", "Invalid value for '%s.role': '%s'. Supported values are: 'system', 'developer', 'user', 'assistant' and 'tool'.", p, w.Role)
	}
	if w.Refusal != nil {
		m.Refusal = *w.Refusal
	}
	parts, plain, err := decodeContent(p, m.Role, w.Content)
	if err != nil {
		return m, err
	}
	m.Parts, m.Plain = parts, plain
	mark, err := decodeCache(p+".cache_control", w.CacheControl)
	if err != nil {
		return m, err
	}
	if m.Role == llm.RoleTool && m.ToolCallID == "" {
		return m, oai.Invalid(p+".tool_call_id", "Missing required parameter: '%s.tool_call_id'.", p)
	}
	if len(w.ToolCalls) > 0 && m.Role != llm.RoleAssistant {
		return m, oai.Invalid(p+".tool_calls", "Only assistant messages may have 'tool_calls'.")
	}
	for j, tc := range w.ToolCalls {
		if tc.ID == "" || tc.Function.Name == "" {
			return m, oai.Invalid(fmt.Sprintf("%s.tool_calls[%d]", p, j), "Missing required parameter: '%s.tool_calls[%d].id' or '.function.name'.", p, j)
		}
		m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	if len(m.Parts) == 0 && len(m.ToolCalls) == 0 && m.Role != llm.RoleAssistant {
		return m, oai.Invalid(p+".content", "Missing required parameter: '%s.content'.", p)
	}
	markMessage(&m, mark)
	return m, nil
}

// markMessage puts a breakpoint the client put on a whole message on the block that ends
// it, where a provider that marks blocks takes it: a tool message's own block (its result),
// else its last tool call, else its last part (the one text part of a string content).
func markMessage(m *llm.Message, c *llm.Cache) {
	switch {
	case c == nil:
	case m.Role == llm.RoleTool:
		m.Cache = c
	case len(m.ToolCalls) > 0:
		m.ToolCalls[len(m.ToolCalls)-1].Cache = c
	case len(m.Parts) > 0:
		m.Parts[len(m.Parts)-1].Cache = c
	}
}

// decodeCache reads an Anthropic-style cache_control (an extension of the Chat wire that
// LiteLLM, OpenRouter and OpenCode send on messages, parts and tools) at p: nil when absent,
// null, or of a type other than ephemeral (the only one there is). A ttl other than 5m or
// 1h is the provider's default: a marker no target could take would turn into a 400
// upstream, and the client meant to cache (issue 46). Only a value that is not an object is
// refused.
func decodeCache(p string, raw json.RawMessage) (*llm.Cache, error) {
	if len(raw) == 0 || oai.IsNull(raw) {
		return nil, nil
	}
	var cc wire.CacheControl
	if raw[0] != '{' || json.Unmarshal(raw, &cc) != nil {
		return nil, oai.TypeErr(p, "an object")
	}
	if cc.Type != "ephemeral" {
		return nil, nil
	}
	c := &llm.Cache{}
	if cc.TTL == "5m" || cc.TTL == "1h" {
		c.TTL = cc.TTL
	}
	return c, nil
}

// decodeContent accepts a string or an array of parts; images, files and audio only in
// user messages.
func decodeContent(p string, role llm.Role, raw json.RawMessage) ([]llm.Part, bool, error) {
	if len(raw) == 0 || oai.IsNull(raw) {
		return nil, false, nil
	}
	s, ok := plainString(raw)
	if ok || json.Unmarshal(raw, &s) == nil {
		return []llm.Part{{Type: llm.PartText, Text: s}}, true, nil
	}
	var ws []wire.ContentPart
	if err := json.Unmarshal(raw, &ws); err != nil {
		return nil, false, oai.TypeErr(p+".content", "a string or an array of content parts")
	}
	parts := make([]llm.Part, 0, len(ws))
	for j, w := range ws {
		pp := fmt.Sprintf("%s.content[%d]", p, j)
		mark, err := decodeCache(pp+".cache_control", w.CacheControl)
		if err != nil {
			return nil, false, err
		}
		switch w.Type {
		case "text":
			if w.Text == nil {
				return nil, false, oai.Invalid(pp+".text", "Missing required parameter: '%s.text'.", pp)
			}
			parts = append(parts, llm.Part{Type: llm.PartText, Text: *w.Text})
		case "image_url":
			if role != llm.RoleUser {
				return nil, false, oai.Invalid(pp+".type", "Image content parts are only allowed in user messages.")
			}
			if w.ImageURL == nil || w.ImageURL.URL == "" {
				return nil, false, oai.Invalid(pp+".image_url.url", "Missing required parameter: '%s.image_url.url'.", pp)
			}
			parts = append(parts, llm.Part{Type: llm.PartImage, URL: w.ImageURL.URL, Detail: w.ImageURL.Detail})
		case "file", "input_audio":
			if role != llm.RoleUser {
				return nil, false, oai.Invalid(pp+".type", "File and audio content parts are only allowed in user messages.")
			}
			var part llm.Part
			var err error
			if w.Type == "input_audio" {
				part, err = oai.AudioPart(pp, w.InputAudio)
			} else if w.File == nil {
				err = oai.Invalid(pp+".file", "Missing required parameter: '%s.file'.", pp)
			} else {
				part, err = oai.FilePart(pp+".file", w.File.FileData, "", w.File.FileID, w.File.Filename)
			}
			if err != nil {
				return nil, false, err
			}
			parts = append(parts, part)
		default:
			return nil, false, oai.Invalid(pp+".type", "Invalid value for '%s.type': '%s'. Supported values are: 'text', 'image_url', 'input_audio' and 'file'.", pp, w.Type)
		}
		parts[len(parts)-1].Cache = mark // each case added one part
	}
	return parts, false, nil
}
