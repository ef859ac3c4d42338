package openai

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
	wire "github.com/sluice-gw/sluice/internal/schema/openai"
)

// responsesSkip names the Extra members not passed on to a Responses upstream: the members
// encodeResponsesRequest writes itself, Chat Completions members it translates
// (reasoning_effort, verbosity) or that llm.Request models, and Chat Completions members
// the Responses API does not have, which it would refuse with a 400 that no other target
// would have caused.
var responsesSkip = map[string]bool{
	"model": true, "input": true, "instructions": true, "tools": true, "tool_choice": true,
	"max_output_tokens": true, "temperature": true, "top_p": true, "user": true, "metadata": true,
	"previous_response_id": true, "store": true, "include": true, "stream": true,
	"reasoning_effort": true, "verbosity": true,
	"messages": true, "response_format": true, "n": true, "max_tokens": true,
	"max_completion_tokens": true, "stop": true, "seed": true, "logprobs": true,
	"top_logprobs": true, "stream_options": true,
	"frequency_penalty": true, "presence_penalty": true, "logit_bias": true, "modalities": true,
	"audio": true, "prediction": true, "web_search_options": true, "functions": true,
	"function_call": true,
}

// minOutputTokens is the Responses API's floor for max_output_tokens: a smaller limit, which
// Chat Completions accepts, is refused with a 400 that another target would not send.
const minOutputTokens = 16

// encodeResponsesRequest writes the Responses body of req, always streamed. Leading system
// and developer messages become instructions; the rest of the conversation becomes input
// items in order. The output is deterministic: no map is iterated.
func encodeResponsesRequest(req *llm.Request) ([]byte, error) {
	if req.N > 1 {
		return nil, &llm.Error{Kind: llm.Unsupported, Status: 400, Param: "n", Code: "invalid_value",
			Message: "n > 1 is not supported by the Responses API"}
	}
	if e := req.NativeOnly("responses"); e != nil {
		return nil, e // an Anthropic client's server tool or document: another target must serve it
	}
	if n := req.Native; n != nil && n.Wire == "responses" {
		return encodeNative(req.Model, n.Fields, req.Plain, extra(req, "prompt_cache_key")), nil
	}
	if err := checkParts(responsesAPI, req); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(1024)
	b.WriteString(`{"model":`)
	writeString(&b, req.Model)
	instructions, rest := splitInstructions(req.Messages)
	if instructions != "" {
		b.WriteString(`,"instructions":`)
		writeString(&b, instructions)
	}
	b.WriteString(`,"input":[`)
	w := itemWriter{b: &b}
	for i := range rest {
		w.message(&rest[i])
	}
	b.WriteByte(']')
	if len(req.Tools) > 0 {
		if err := writeResponsesTools(&b, req.Tools); err != nil {
			return nil, err
		}
	}
	if len(req.ToolChoice) > 0 && string(req.ToolChoice) != "null" {
		if err := writeResponsesToolChoice(&b, req.ToolChoice); err != nil {
			return nil, err
		}
	}
	wroteText, err := writeText(&b, req.ResponseFormat, extra(req, "verbosity"))
	if err != nil {
		return nil, err
	}
	limit := req.MaxCompletionTokens
	if limit == nil {
		limit = req.MaxTokens
	}
	if limit != nil {
		writeInt(&b, "max_output_tokens", int64(max(*limit, minOutputTokens)))
	}
	if req.Temperature != nil {
		writeFloat(&b, "temperature", *req.Temperature)
	}
	if req.TopP != nil {
		writeFloat(&b, "top_p", *req.TopP)
	}
	if req.User != "" {
		b.WriteString(`,"user":`)
		writeString(&b, req.User)
	}
	if len(req.Metadata) > 0 {
		if err := writeRaw(&b, "metadata", req.Metadata); err != nil {
			return nil, err
		}
	}
	if req.PreviousResponseID != "" {
		b.WriteString(`,"previous_response_id":`)
		writeString(&b, req.PreviousResponseID)
	}
	// The gateway does not keep responses upstream unless the client asked (issue 7): a
	// stored response is data the operator did not agree to hold at the provider.
	b.WriteString(`,"store":`)
	b.WriteString(strconv.FormatBool(req.Store != nil && *req.Store))
	if len(req.Include) > 0 {
		b.WriteString(`,"include":[`)
		for i, s := range req.Include {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(&b, s)
		}
		b.WriteByte(']')
	}
	wroteReasoning := false
	if effort := extra(req, "reasoning_effort"); effort != nil {
		if !json.Valid(effort) {
			return nil, llm.Errorf(llm.Internal, "openai: field %q is not valid JSON", "reasoning_effort")
		}
		b.WriteString(`,"reasoning":{"effort":`)
		b.Write(effort)
		b.WriteByte('}')
		wroteReasoning = true
	}
	// Upstream calls stream whatever the client asked, unless upstream: plain (DESIGN §1).
	b.WriteString(`,"stream":` + strconv.FormatBool(!req.Plain))
	for _, f := range req.Extra {
		if responsesSkip[f.Name] || f.Name == "text" && wroteText || f.Name == "reasoning" && wroteReasoning {
			continue
		}
		if err := writeRaw(&b, f.Name, f.Value); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// encodeNative writes the body a Responses client sent (llm.Native.Fields) as it came, in its
// order, but for two members: model, which names the target's model, and stream, which is
// true (upstream calls stream, DESIGN §1) unless plain (upstream: plain); store is added as false when the client
// left it out (issue 7), and prompt_cache_key as key when the client left it out and the
// adapter derived one (session.go; nil: none). Every other member, the ones the gateway does not model included
// (namespace, hosted and custom tools, their items, client_metadata, ...), passes byte for
// byte: the upstream speaks the client's wire and judges them itself.
func encodeNative(model string, fields []llm.Field, plain bool, key json.RawMessage) []byte {
	var b bytes.Buffer
	b.Grow(1024)
	b.WriteByte('{')
	stream, store, keyed := false, false, false
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(&b, f.Name)
		b.WriteByte(':')
		switch f.Name {
		case "model":
			writeString(&b, model)
		case "stream":
			b.WriteString(strconv.FormatBool(!plain))
			stream = true
		case "prompt_cache_key":
			keyed = true
			if key != nil && string(bytes.TrimSpace(f.Value)) == "null" {
				b.Write(key) // null is none: the derived key takes its place
			} else {
				b.Write(f.Value)
			}
		case "store":
			store = true
			if string(bytes.TrimSpace(f.Value)) == "null" {
				b.WriteString("false") // null is the API's default, true: not the gateway's
			} else {
				b.Write(f.Value)
			}
		default:
			b.Write(f.Value)
		}
	}
	if !store {
		b.WriteString(`,"store":false`)
	}
	if !keyed && key != nil {
		b.WriteString(`,"prompt_cache_key":`)
		b.Write(key)
	}
	if !stream {
		b.WriteString(`,"stream":` + strconv.FormatBool(!plain))
	}
	b.WriteByte('}')
	return b.Bytes()
}

// extra returns the value of the Extra member name, nil if absent or null.
func extra(req *llm.Request, name string) json.RawMessage {
	for _, f := range req.Extra {
		if f.Name == name && string(f.Value) != "null" {
			return f.Value
		}
	}
	return nil
}

// splitInstructions joins the text of the leading system and developer messages into
// instructions, and returns the messages after them. Leading ones only: instructions are
// not carried over from a previous response, as a client's instructions are meant to be,
// while a system message later in a conversation keeps its place as an input item.
func splitInstructions(msgs []llm.Message) (string, []llm.Message) {
	var sb strings.Builder
	n := 0
	for ; n < len(msgs); n++ {
		m := &msgs[n]
		if m.Role != llm.RoleSystem && m.Role != llm.RoleDeveloper || !textOnly(m.Parts) {
			break
		}
		if n > 0 {
			sb.WriteString("\n\n")
		}
		for _, p := range m.Parts {
			sb.WriteString(p.Text)
		}
	}
	return sb.String(), msgs[n:]
}

func textOnly(parts []llm.Part) bool {
	for _, p := range parts {
		if p.Type != llm.PartText {
			return false
		}
	}
	return true
}

func writeResponsesTools(b *bytes.Buffer, tools []llm.Tool) error {
	b.WriteString(`,"tools":[`)
	for i := range tools {
		t, err := tools[i].Function() // a request that came in another wire than Responses
		if err != nil {
			return err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"type":"function","name":`)
		writeString(b, t.Name)
		if t.Description != "" {
			b.WriteString(`,"description":`)
			writeString(b, t.Description)
		}
		if len(t.Parameters) > 0 {
			if err := writeRaw(b, "parameters", t.Parameters); err != nil {
				return err
			}
		} else {
			// Chat Completions reads no parameters as none; the Responses API requires them.
			b.WriteString(`,"parameters":{"type":"object","properties":{}}`)
		}
		// Strict defaults to true in the Responses API and to false in Chat Completions: say
		// false when the client did not ask, or a schema written for Chat is refused.
		b.WriteString(`,"strict":`)
		b.WriteString(strconv.FormatBool(t.Strict != nil && *t.Strict))
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return nil
}

// writeResponsesToolChoice translates a Chat tool_choice: the strings are the same; a named
// function, a named custom tool and allowed_tools lose their inner object.
func writeResponsesToolChoice(b *bytes.Buffer, raw json.RawMessage) error {
	if !json.Valid(raw) {
		return llm.Errorf(llm.Internal, "openai: field %q is not valid JSON", "tool_choice")
	}
	b.WriteString(`,"tool_choice":`)
	writeToolRef(b, bytes.TrimSpace(raw))
	return nil
}

// writeToolRef writes a valid tool_choice value, or one of its allowed tools, in Responses
// terms. A shape it does not know (already in Responses terms, a hosted tool) is written
// unchanged.
func writeToolRef(b *bytes.Buffer, raw json.RawMessage) {
	var t wire.ToolChoice
	if raw[0] != '{' || json.Unmarshal(raw, &t) != nil {
		b.Write(raw)
		return
	}
	var name string
	switch a := t.AllowedTools; {
	case t.Type == "function" && t.Function != nil:
		name = t.Function.Name
	case t.Type == "custom" && t.Custom != nil:
		name = t.Custom.Name
	case t.Type == "allowed_tools" && a != nil:
		b.WriteString(`{"type":"allowed_tools","mode":`)
		writeString(b, a.Mode)
		b.WriteString(`,"tools":[`)
		for i, r := range a.Tools {
			if i > 0 {
				b.WriteByte(',')
			}
			writeToolRef(b, bytes.TrimSpace(r))
		}
		b.WriteString(`]}`)
		return
	default:
		b.Write(raw)
		return
	}
	b.WriteString(`{"type":`)
	writeString(b, t.Type)
	b.WriteString(`,"name":`)
	writeString(b, name)
	b.WriteByte('}')
}
