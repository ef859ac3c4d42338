package openai

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/sluice-gw/sluice/internal/jsonstr"
	"github.com/sluice-gw/sluice/internal/llm"
)

// written names the members encodeRequest writes itself; an Extra member with one of these
// names is dropped rather than sent twice (a duplicate key means whatever the server's
// parser makes of it).
var written = map[string]bool{
	"model": true, "messages": true, "tools": true, "tool_choice": true, "response_format": true,
	"n": true, "max_tokens": true, "max_completion_tokens": true, "temperature": true,
	"top_p": true, "stop": true, "user": true, "seed": true, "logprobs": true,
	"top_logprobs": true, "stream": true, "stream_options": true,
}

// sizeHint is about the size of req's body, to allocate it once: the text of its messages
// and the JSON around them.
func sizeHint(req *llm.Request) int {
	n := 256 + len(req.Model)
	for i := range req.Messages {
		n += 64
		for _, p := range req.Messages[i].Parts {
			n += len(p.Text) + len(p.URL) + len(p.Data) + len(p.FileID)
		}
		for _, tc := range req.Messages[i].ToolCalls {
			n += 96 + len(tc.Arguments)
		}
	}
	for i := range req.Tools {
		n += 128 + len(req.Tools[i].Description) + len(req.Tools[i].Parameters)
	}
	for _, f := range req.Extra {
		n += 8 + len(f.Name) + len(f.Value)
	}
	return n
}

// encodeRequest writes the Chat Completions body of req: streamed, with usage asked for
// unless includeUsage is false (a Plain request is one body, whose usage always comes), then
// Extra unchanged and in order. The output is
// deterministic: no map is iterated.
func encodeRequest(req *llm.Request, includeUsage bool) ([]byte, error) {
	if err := checkParts(chatAPI, req); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(sizeHint(req))
	b.WriteString(`{"model":`)
	writeString(&b, req.Model)
	b.WriteString(`,"messages":[`)
	for i := range req.Messages {
		if i > 0 {
			b.WriteByte(',')
		}
		writeMessage(&b, &req.Messages[i])
	}
	b.WriteByte(']')
	if len(req.Tools) > 0 {
		b.WriteString(`,"tools":[`)
		for i := range req.Tools {
			t, err := req.Tools[i].Function() // custom tools take one string; hosted ones cannot come
			if err != nil {
				return nil, err
			}
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"type":"function","function":{"name":`)
			writeString(&b, t.Name)
			if t.Description != "" {
				b.WriteString(`,"description":`)
				writeString(&b, t.Description)
			}
			if len(t.Parameters) > 0 {
				if err := writeRaw(&b, "parameters", t.Parameters); err != nil {
					return nil, err
				}
			}
			if t.Strict != nil {
				b.WriteString(`,"strict":`)
				b.WriteString(strconv.FormatBool(*t.Strict))
			}
			b.WriteString(`}}`)
		}
		b.WriteByte(']')
	}
	if len(req.ToolChoice) > 0 {
		if err := writeRaw(&b, "tool_choice", req.ToolChoice); err != nil {
			return nil, err
		}
	}
	if len(req.ResponseFormat) > 0 {
		if err := writeRaw(&b, "response_format", req.ResponseFormat); err != nil {
			return nil, err
		}
	}
	if req.N > 0 {
		writeInt(&b, "n", int64(req.N))
	}
	// Both token limits go out as the client named them: newer OpenAI models reject
	// max_tokens, and many compatible servers know only max_tokens.
	if req.MaxTokens != nil {
		writeInt(&b, "max_tokens", int64(*req.MaxTokens))
	}
	if req.MaxCompletionTokens != nil {
		writeInt(&b, "max_completion_tokens", int64(*req.MaxCompletionTokens))
	}
	if req.Temperature != nil {
		writeFloat(&b, "temperature", *req.Temperature)
	}
	if req.TopP != nil {
		writeFloat(&b, "top_p", *req.TopP)
	}
	if len(req.Stop) > 0 {
		b.WriteString(`,"stop":[`)
		for i, s := range req.Stop {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(&b, s)
		}
		b.WriteByte(']')
	}
	if req.User != "" {
		b.WriteString(`,"user":`)
		writeString(&b, req.User)
	}
	if req.Seed != nil {
		writeInt(&b, "seed", *req.Seed)
	}
	if req.Logprobs {
		b.WriteString(`,"logprobs":true`)
	}
	if req.TopLogprobs != nil {
		writeInt(&b, "top_logprobs", int64(*req.TopLogprobs))
	}
	// Upstream calls stream whatever the client asked, unless upstream: plain (DESIGN §1).
	if req.Plain {
		b.WriteString(`,"stream":false`)
	} else {
		b.WriteString(`,"stream":true`)
	}
	if includeUsage && !req.Plain {
		b.WriteString(`,"stream_options":{"include_usage":true}`)
	}
	for _, f := range req.Extra {
		if written[f.Name] {
			continue
		}
		if err := writeRaw(&b, f.Name, f.Value); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func writeMessage(b *bytes.Buffer, m *llm.Message) {
	b.WriteString(`{"role":`)
	writeString(b, string(m.Role))
	switch {
	case m.Plain && len(m.Parts) == 1 && m.Parts[0].Type == llm.PartText:
		b.WriteString(`,"content":`)
		writeString(b, m.Parts[0].Text)
	case len(m.Parts) > 0:
		b.WriteString(`,"content":[`)
		for i, p := range m.Parts {
			if i > 0 {
				b.WriteByte(',')
			}
			switch p.Type {
			case llm.PartImage:
				b.WriteString(`{"type":"image_url","image_url":{"url":`)
				writeString(b, p.URL)
				if p.Detail != "" {
					b.WriteString(`,"detail":`)
					writeString(b, p.Detail)
				}
				b.WriteString(`}}`)
			case llm.PartFile, llm.PartAudio:
				writeChatMedia(b, &m.Parts[i])
			default:
				b.WriteString(`{"type":"text","text":`)
				writeString(b, p.Text)
				b.WriteByte('}')
			}
		}
		b.WriteByte(']')
	case m.Role == llm.RoleAssistant:
		// An assistant turn of only tool calls or a refusal: content is null, as OpenAI
		// returns it.
		b.WriteString(`,"content":null`)
	default:
		b.WriteString(`,"content":""`)
	}
	if m.Name != "" {
		b.WriteString(`,"name":`)
		writeString(b, m.Name)
	}
	if m.Refusal != "" {
		b.WriteString(`,"refusal":`)
		writeString(b, m.Refusal)
	}
	if len(m.ToolCalls) > 0 {
		b.WriteString(`,"tool_calls":[`)
		for i, tc := range m.ToolCalls {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"id":`)
			writeString(b, tc.ID)
			b.WriteString(`,"type":"function","function":{"name":`)
			writeString(b, tc.Name)
			// Arguments is the model's JSON text, sent back as a string, byte for byte.
			b.WriteString(`,"arguments":`)
			writeString(b, tc.Arguments)
			b.WriteString(`}}`)
		}
		b.WriteByte(']')
	}
	if m.ToolCallID != "" {
		b.WriteString(`,"tool_call_id":`)
		writeString(b, m.ToolCallID)
	}
	b.WriteByte('}')
}

// writeRaw writes ,"name":raw. Raw JSON comes from the client through the server's decoder;
// it is checked anyway, since an invalid body would be blamed on the upstream.
func writeRaw(b *bytes.Buffer, name string, raw json.RawMessage) error {
	if !json.Valid(raw) {
		return llm.Errorf(llm.Internal, "openai: field %q is not valid JSON", name)
	}
	b.WriteByte(',')
	writeString(b, name)
	b.WriteByte(':')
	b.Write(raw)
	return nil
}

func writeInt(b *bytes.Buffer, name string, v int64) {
	b.WriteString(`,"`)
	b.WriteString(name)
	b.WriteString(`":`)
	b.Write(strconv.AppendInt(b.AvailableBuffer(), v, 10))
}

func writeFloat(b *bytes.Buffer, name string, v float64) {
	b.WriteString(`,"`)
	b.WriteString(name)
	b.WriteString(`":`)
	// 'g' with the shortest representation is valid JSON (0.7, 1, 1e-07); NaN and Inf
	// cannot reach here: the server's JSON decoder never produces them.
	b.Write(strconv.AppendFloat(b.AvailableBuffer(), v, 'g', -1, 64))
}

// writeString writes s as a JSON string (package jsonstr decides the escaping).
func writeString(b *bytes.Buffer, s string) {
	b.Write(jsonstr.Append(b.AvailableBuffer(), s))
}
