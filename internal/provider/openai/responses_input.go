package openai

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
	wire "github.com/sluice-gw/sluice/internal/schema/openai"
)

// itemWriter writes the input items of a Responses body, one or more per message.
type itemWriter struct {
	b *bytes.Buffer
	n int
}

// open starts an item: a comma before every item but the first.
func (w *itemWriter) open() *bytes.Buffer {
	if w.n > 0 {
		w.b.WriteByte(',')
	}
	w.n++
	return w.b
}

// message writes the items of one message. Messages are written the short way
// ({"role","content"}, no "type":"message"): that form takes a plain string and accepts
// assistant output_text parts without the ids and statuses of a full output item.
func (w *itemWriter) message(m *llm.Message) {
	switch m.Role {
	case llm.RoleAssistant:
		w.assistant(m)
	case llm.RoleTool:
		w.toolOutput(m)
	default:
		b := w.open()
		b.WriteString(`{"role":`)
		writeString(b, string(m.Role))
		b.WriteString(`,"content":`)
		switch {
		case m.Plain && len(m.Parts) == 1 && m.Parts[0].Type == llm.PartText:
			writeString(b, m.Parts[0].Text)
		case len(m.Parts) == 0:
			b.WriteString(`""`)
		default:
			writeInputParts(b, m.Parts)
		}
		b.WriteByte('}')
	}
}

// assistant writes an assistant turn in the order the Responses API produced it: reasoning
// items, the message (text and refusal), then one function_call item per call.
func (w *itemWriter) assistant(m *llm.Message) {
	for _, r := range m.Reasoning {
		// Without its encrypted content a reasoning item can only be resolved by id in the
		// upstream's store, which the gateway turns off; a summary alone is not accepted.
		if r.Encrypted == "" {
			continue
		}
		// Another format's signature (an Anthropic or Gemini one) is refused with a 400.
		if !r.ReadBy("responses") {
			continue
		}
		b := w.open()
		b.WriteString(`{"type":"reasoning"`)
		if r.ID != "" {
			b.WriteString(`,"id":`)
			writeString(b, r.ID)
		}
		b.WriteString(`,"summary":[`)
		if r.Text != "" {
			b.WriteString(`{"type":"summary_text","text":`)
			writeString(b, r.Text)
			b.WriteByte('}')
		}
		b.WriteString(`],"encrypted_content":`)
		writeString(b, r.Encrypted)
		b.WriteByte('}')
	}
	var texts []string
	for _, p := range m.Parts {
		if p.Type == llm.PartText && p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	switch {
	case m.Refusal == "" && len(texts) == 1:
		b := w.open()
		b.WriteString(`{"role":"assistant","content":`)
		writeString(b, texts[0])
		b.WriteByte('}')
	case m.Refusal != "" || len(texts) > 1:
		b := w.open()
		b.WriteString(`{"role":"assistant","content":[`)
		for i, t := range texts {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"type":"output_text","text":`)
			writeString(b, t)
			b.WriteByte('}')
		}
		if m.Refusal != "" {
			if len(texts) > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"type":"refusal","refusal":`)
			writeString(b, m.Refusal)
			b.WriteByte('}')
		}
		b.WriteString(`]}`)
	}
	for _, tc := range m.ToolCalls {
		b := w.open()
		b.WriteString(`{"type":"function_call","call_id":`)
		writeString(b, tc.ID)
		b.WriteString(`,"name":`)
		writeString(b, tc.Name)
		// Arguments is the model's JSON text, sent back as a string, byte for byte.
		b.WriteString(`,"arguments":`)
		writeString(b, tc.Arguments)
		b.WriteByte('}')
	}
}

// toolOutput writes a tool message as a function_call_output: a string when its content is
// text, the list form when it carries an image.
func (w *itemWriter) toolOutput(m *llm.Message) {
	b := w.open()
	b.WriteString(`{"type":"function_call_output","call_id":`)
	writeString(b, m.ToolCallID)
	b.WriteString(`,"output":`)
	if textOnly(m.Parts) {
		var out strings.Builder
		for _, p := range m.Parts {
			out.WriteString(p.Text)
		}
		writeString(b, out.String())
	} else {
		writeInputParts(b, m.Parts)
	}
	b.WriteByte('}')
}

// writeInputParts writes content parts as input_text, input_image and input_file (audio,
// which the Responses API does not take, was refused by checkParts).
func writeInputParts(b *bytes.Buffer, parts []llm.Part) {
	b.WriteByte('[')
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(',')
		}
		switch p.Type {
		case llm.PartImage:
			b.WriteString(`{"type":"input_image","image_url":`)
			writeString(b, p.URL)
			// detail is required by the Responses API; Chat Completions defaults it to auto.
			b.WriteString(`,"detail":`)
			if p.Detail != "" {
				writeString(b, p.Detail)
			} else {
				b.WriteString(`"auto"`)
			}
			b.WriteByte('}')
		case llm.PartFile:
			writeInputFile(b, &parts[i])
		default:
			b.WriteString(`{"type":"input_text","text":`)
			writeString(b, p.Text)
			b.WriteByte('}')
		}
	}
	b.WriteByte(']')
}

// writeText writes the text member (format from response_format, and verbosity) when
// either is set, and reports whether it wrote one. A Chat response_format
// (wire.ResponseFormat) of type json_schema moves its inner object up a level in the
// Responses text.format.
func writeText(b *bytes.Buffer, format, verbosity json.RawMessage) (bool, error) {
	if string(format) == "null" {
		format = nil
	}
	if len(format) == 0 && len(verbosity) == 0 {
		return false, nil
	}
	for _, v := range []json.RawMessage{format, verbosity} {
		if len(v) > 0 && !json.Valid(v) {
			return false, llm.Errorf(llm.Internal, "openai: response_format or verbosity is not valid JSON")
		}
	}
	b.WriteString(`,"text":{`)
	if len(format) > 0 {
		b.WriteString(`"format":`)
		var rf wire.ResponseFormat
		if json.Unmarshal(format, &rf) == nil && rf.Type == "json_schema" && rf.JSONSchema != nil {
			s := rf.JSONSchema
			b.WriteString(`{"type":"json_schema","name":`)
			writeString(b, s.Name)
			if s.Description != "" {
				b.WriteString(`,"description":`)
				writeString(b, s.Description)
			}
			if len(s.Schema) > 0 {
				b.WriteString(`,"schema":`)
				b.Write(s.Schema)
			}
			if s.Strict != nil {
				b.WriteString(`,"strict":`)
				b.WriteString(strconv.FormatBool(*s.Strict))
			}
			b.WriteByte('}')
		} else {
			// json_object and text have the same shape in both APIs.
			b.Write(bytes.TrimSpace(format))
		}
	}
	if len(verbosity) > 0 {
		if len(format) > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"verbosity":`)
		b.Write(bytes.TrimSpace(verbosity))
	}
	b.WriteByte('}')
	return true, nil
}
