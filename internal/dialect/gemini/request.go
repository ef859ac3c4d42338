package gemini

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
	wire "github.com/sluice-gw/sluice/internal/schema/gemini"
)

// SyntheticID prefixes the ids the gateway gives function calls that came without one (the
// Gemini API gives none): they tie a functionResponse to its call in llm terms, and neither
// the Gemini adapter nor this wire's answers send them back.
const SyntheticID = "gemini_call_"

// Request is a decoded GenerateContentRequest: the provider-neutral request, and whether the
// client asked for thought summaries (thinkingConfig.includeThoughts), which the answer
// carries as thought parts only then, as Google does.
type Request struct {
	Req      llm.Request
	Thoughts bool
	// CachedContent is the client's context cache ("cachedContents/..."), which only a
	// Gemini target holds: the client's body (Native) carries it there, and other targets
	// refuse the request (Native.Only) rather than answer without the cached context.
	CachedContent string
}

// body is a GenerateContentRequest as this wire reads it: the schema's members, and model,
// which countTokens' generateContentRequest carries (the path's model is the one served).
type body struct {
	wire.Request
	Model         string          `json:"model,omitempty"`
	CachedContent json.RawMessage `json:"cachedContent,omitempty"`
}

// DecodeRequest parses and validates a generateContent body. Decoding is strict, as
// Google's is: an unknown member (a part of a type the gateway does not serve, a hosted tool
// such as googleSearch), a member of the wrong type or a body that is not JSON is a 400.
func DecodeRequest(b []byte) (*Request, error) {
	var w body
	if err := strict(b, &w); err != nil {
		return nil, err
	}
	return translate(&w)
}

// DecodeCount parses a countTokens body: {"contents": [...]} or {"generateContentRequest":
// {...}}.
func DecodeCount(b []byte) (*Request, error) {
	var c struct {
		Contents               []wire.Content  `json:"contents"`
		GenerateContentRequest json.RawMessage `json:"generateContentRequest"`
	}
	if err := strict(b, &c); err != nil {
		return nil, err
	}
	if len(c.GenerateContentRequest) > 0 && string(c.GenerateContentRequest) != "null" {
		if c.Contents != nil {
			return nil, invalid("countTokens takes contents or generateContentRequest, not both.")
		}
		return DecodeRequest(c.GenerateContentRequest)
	}
	return translate(&body{Request: wire.Request{Contents: c.Contents}})
}

// strict decodes one JSON value into v, refusing unknown members and trailing data, with
// Google's words for what is wrong.
func strict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	err := d.Decode(v)
	if err == nil && d.More() {
		err = errors.New("data after the JSON value")
	}
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	var be base64.CorruptInputError
	switch {
	case errors.As(err, &te):
		return invalid(fmt.Sprintf("Invalid value at '%s' (%s): not a %s.", te.Field, te.Value, te.Type))
	case errors.As(err, &be):
		return invalid("Invalid value at 'inlineData.data': not valid base64.")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return invalid("Invalid JSON payload received. Unknown name " + name + ": the gateway does not serve it.")
	}
	return invalid("Invalid JSON payload received: " + err.Error() + ".")
}

// translate maps a request body to llm terms; what llm cannot say is refused with a 400
// naming it rather than dropped.
func translate(w *body) (*Request, error) {
	r := &Request{}
	q := &r.Req
	if len(w.CachedContent) > 0 && string(w.CachedContent) != "null" {
		if json.Unmarshal(w.CachedContent, &r.CachedContent) != nil || r.CachedContent == "" {
			return nil, invalid("Invalid value at 'cached_content' (TYPE_STRING): a cachedContents/ name.")
		}
	}
	if len(w.Contents) == 0 {
		return nil, invalid("contents is not specified.")
	}
	if s := w.SystemInstruction; s != nil {
		m := llm.Message{Role: llm.RoleSystem}
		for i, p := range s.Parts {
			if !textOnly(&p) {
				return nil, invalid(fmt.Sprintf("systemInstruction.parts[%d]: only text parts are allowed.", i))
			}
			m.Parts = append(m.Parts, llm.Part{Type: llm.PartText, Text: p.Text})
		}
		if len(m.Parts) > 0 {
			q.Messages = append(q.Messages, m)
		}
	}
	var c calls
	for i := range w.Contents {
		msgs, err := c.turn(i, &w.Contents[i])
		if err != nil {
			return nil, err
		}
		q.Messages = append(q.Messages, msgs...)
	}
	if err := tools(q, w.Tools, w.ToolConfig); err != nil {
		return nil, err
	}
	if g := w.GenerationConfig; g != nil {
		if err := generation(r, g); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// textOnly reports whether p is a plain text part.
func textOnly(p *wire.Part) bool {
	return p.InlineData == nil && p.FileData == nil && p.FunctionCall == nil && p.FunctionResponse == nil
}

// calls tracks the function calls of the conversation: their ids, made up where the client
// gave none, and which are still unanswered, so that a functionResponse without an id
// answers the first open call of its name.
type calls struct {
	n    int
	open []llm.ToolCall
}

// turn translates one Content: a "model" turn is one assistant message; a "user" turn (or
// "function", the older role of results) is a tool message per functionResponse, then a user
// message of its other parts.
func (c *calls) turn(i int, t *wire.Content) ([]llm.Message, error) {
	at := "contents[" + strconv.Itoa(i) + "]"
	if len(t.Parts) == 0 {
		return nil, invalid(at + ".parts must not be empty.")
	}
	switch t.Role {
	case "model":
		return c.model(at, t.Parts)
	case "user", "", "function":
		return c.user(at, t.Parts)
	}
	return nil, invalid(fmt.Sprintf("Please use a valid role: user, model (%s.role is %q).", at, t.Role))
}

func (c *calls) model(at string, parts []wire.Part) ([]llm.Message, error) {
	m := llm.Message{Role: llm.RoleAssistant}
	for j := range parts {
		p := &parts[j]
		pat := at + ".parts[" + strconv.Itoa(j) + "]"
		id := ""
		switch {
		case p.FunctionCall != nil:
			fc := p.FunctionCall
			if fc.Name == "" {
				return nil, invalid(pat + ".functionCall.name is required.")
			}
			args := "{}"
			if a := bytes.TrimSpace(fc.Args); len(a) > 0 && string(a) != "null" {
				if a[0] != '{' {
					return nil, invalid(pat + ".functionCall.args must be an object.")
				}
				args = string(a)
			}
			if id = fc.ID; id == "" {
				id = SyntheticID + strconv.Itoa(c.n)
			}
			c.n++
			tc := llm.ToolCall{ID: id, Name: fc.Name, Arguments: args}
			m.ToolCalls = append(m.ToolCalls, tc)
			c.open = append(c.open, tc)
		case p.InlineData != nil || p.FileData != nil || p.FunctionResponse != nil:
			return nil, invalid(pat + ": a model turn holds text and functionCall parts only.")
		case p.Thought:
			if p.Text != "" {
				m.Reasoning = append(m.Reasoning, llm.Reasoning{Text: p.Text, Wire: "gemini"})
			}
		case p.Text != "":
			m.Parts = append(m.Parts, llm.Part{Type: llm.PartText, Text: p.Text})
		}
		if p.ThoughtSignature != "" {
			// On a call's part it is that call's (the adapter puts it back there); else it
			// goes on the turn's first part.
			// Wire: only a Gemini target can read the signature back (issue 46).
			m.Reasoning = append(m.Reasoning, llm.Reasoning{ID: id, Encrypted: p.ThoughtSignature, Wire: "gemini"})
		}
	}
	return []llm.Message{m}, nil
}

func (c *calls) user(at string, parts []wire.Part) ([]llm.Message, error) {
	var out []llm.Message
	m := llm.Message{Role: llm.RoleUser}
	for j := range parts {
		p := &parts[j]
		pat := at + ".parts[" + strconv.Itoa(j) + "]"
		switch {
		case p.FunctionResponse != nil:
			msg, err := c.result(pat, p.FunctionResponse)
			if err != nil {
				return nil, err
			}
			out = append(out, msg)
		case p.FunctionCall != nil:
			return nil, invalid(pat + ": a functionCall part belongs to a model turn.")
		case p.InlineData != nil:
			part, err := inline(pat, p.InlineData)
			if err != nil {
				return nil, err
			}
			m.Parts = append(m.Parts, part)
		case p.FileData != nil:
			f := p.FileData
			if f.FileURI == "" {
				return nil, invalid(pat + ".fileData.fileUri is required.")
			}
			mt := strings.ToLower(f.MIMEType)
			switch {
			case mt == "" || strings.HasPrefix(mt, "image/"):
				m.Parts = append(m.Parts, llm.Part{Type: llm.PartImage, URL: f.FileURI})
			case strings.HasPrefix(f.FileURI, filesAPI):
				// A file of Google's Files API: only a Gemini target can read it.
				m.Parts = append(m.Parts, llm.Part{Type: llm.PartFile, FileID: f.FileURI, FileOf: "gemini", MediaType: mt})
			default:
				m.Parts = append(m.Parts, llm.Part{Type: llm.PartFile, URL: f.FileURI, MediaType: mt})
			}
		case p.Text != "":
			m.Parts = append(m.Parts, llm.Part{Type: llm.PartText, Text: p.Text})
		}
	}
	if len(m.Parts) > 0 {
		out = append(out, m)
	}
	return out, nil
}

// filesAPI prefixes the URIs of Google's Files API (generativelanguage.googleapis.com).
const filesAPI = "https://generativelanguage.googleapis.com/"

// inline is an inlineData part: an image (a data: URL), a recording (audio/*), or any other
// file (a PDF, plain text, ...), each for the adapters to translate or refuse.
func inline(at string, b *wire.Blob) (llm.Part, error) {
	mt := strings.ToLower(b.MIMEType)
	data := base64.StdEncoding.EncodeToString(b.Data)
	switch {
	case mt == "":
		return llm.Part{}, invalid(at + ".inlineData.mimeType is required.")
	case strings.HasPrefix(mt, "image/"):
		return llm.Part{Type: llm.PartImage, URL: "data:" + b.MIMEType + ";base64," + data}, nil
	case strings.HasPrefix(mt, "audio/"):
		return llm.Part{Type: llm.PartAudio, Data: data, MediaType: mt}, nil
	}
	return llm.Part{Type: llm.PartFile, Data: data, MediaType: mt}, nil
}

// result is a functionResponse as a tool message: it answers the open call of its id, else
// the first open call of its name.
func (c *calls) result(at string, fr *wire.FunctionResponse) (llm.Message, error) {
	k := slices.IndexFunc(c.open, func(tc llm.ToolCall) bool {
		if fr.ID != "" {
			return tc.ID == fr.ID
		}
		return tc.Name == fr.Name
	})
	if k < 0 {
		return llm.Message{}, invalid(at + ".functionResponse " + strconv.Quote(fr.Name) + " answers no functionCall of an earlier model turn.")
	}
	id := c.open[k].ID
	c.open = slices.Delete(c.open, k, k+1)
	res := bytes.TrimSpace(fr.Response)
	if len(res) == 0 || string(res) == "null" {
		res = []byte("{}")
	}
	if res[0] != '{' {
		return llm.Message{}, invalid(at + ".functionResponse.response must be an object.")
	}
	return llm.Message{Role: llm.RoleTool, ToolCallID: id, Name: fr.Name,
		Parts: []llm.Part{{Type: llm.PartText, Text: string(res)}}, Plain: true}, nil
}

// tools maps functionDeclarations to functions and toolConfig to the Chat tool_choice:
// AUTO auto, NONE none, ANY required; ANY with allowedFunctionNames keeps only those
// functions (one: that function by name).
func tools(q *llm.Request, ts []wire.Tool, tc *wire.ToolConfig) error {
	for i, t := range ts {
		for j, f := range t.FunctionDeclarations {
			at := fmt.Sprintf("tools[%d].functionDeclarations[%d]", i, j)
			if f.Name == "" {
				return invalid(at + ".name is required.")
			}
			params := f.ParametersJSONSchema
			if len(params) == 0 && len(f.Parameters) > 0 {
				params = openAPI(f.Parameters)
			}
			if len(params) == 0 || string(params) == "null" {
				params = json.RawMessage(`{"type":"object","properties":{}}`)
			}
			q.Tools = append(q.Tools, llm.Tool{Kind: llm.ToolFunction, Name: f.Name, Description: f.Description, Parameters: params})
		}
	}
	if tc == nil || tc.FunctionCallingConfig == nil {
		return nil
	}
	fc := tc.FunctionCallingConfig
	switch fc.Mode {
	case "", "MODE_UNSPECIFIED", "AUTO":
		q.ToolChoice = json.RawMessage(`"auto"`)
	case "NONE":
		q.ToolChoice = json.RawMessage(`"none"`)
	case "ANY":
		q.ToolChoice = json.RawMessage(`"required"`)
		if len(fc.AllowedFunctionNames) == 0 {
			break
		}
		var kept []llm.Tool
		for _, t := range q.Tools {
			if slices.Contains(fc.AllowedFunctionNames, t.Name) {
				kept = append(kept, t)
			}
		}
		if len(kept) == 0 {
			return invalid("toolConfig.functionCallingConfig.allowedFunctionNames names no declared function.")
		}
		q.Tools = kept
		if len(kept) == 1 {
			b, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": kept[0].Name}})
			q.ToolChoice = b
		}
	default:
		return invalid("toolConfig.functionCallingConfig.mode " + strconv.Quote(fc.Mode) + " is not served (AUTO, ANY or NONE).")
	}
	if len(fc.AllowedFunctionNames) > 0 && fc.Mode != "ANY" {
		return invalid("toolConfig.functionCallingConfig.allowedFunctionNames goes with mode ANY only.")
	}
	return nil
}

// openAPI is an OpenAPI-subset schema (Gemini's parameters, responseSchema) as a JSON
// Schema: the same object with its "type" names in lower case ("OBJECT" is "object").
func openAPI(raw json.RawMessage) json.RawMessage {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && k == "type" {
					x[k] = strings.ToLower(s)
					continue
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	b, err := json.Marshal(v) // encoding/json sorts keys: deterministic
	if err != nil {
		return raw
	}
	return b
}

// generation maps generationConfig. topK, the penalties and the thinking budget have no
// llm field: they go as the Chat members the adapters read (top_k, presence_penalty,
// frequency_penalty, reasoning_effort).
func generation(r *Request, g *wire.GenerationConfig) error {
	q := &r.Req
	if g.CandidateCount > 1 {
		return invalid("generationConfig.candidateCount: the gateway answers one candidate; " + strconv.Itoa(g.CandidateCount) + " were asked.")
	}
	if g.CandidateCount < 0 {
		return invalid("generationConfig.candidateCount must be positive.")
	}
	if t := g.Temperature; t != nil && (*t < 0 || *t > 2) {
		return invalid("generationConfig.temperature must be between 0 and 2.")
	}
	if p := g.TopP; p != nil && (*p < 0 || *p > 1) {
		return invalid("generationConfig.topP must be between 0 and 1.")
	}
	if n := g.MaxOutputTokens; n != nil && *n < 1 {
		return invalid("generationConfig.maxOutputTokens must be positive.")
	}
	q.Temperature, q.TopP, q.MaxTokens, q.Seed = g.Temperature, g.TopP, g.MaxOutputTokens, g.Seed
	q.Stop = g.StopSequences
	if k := g.TopK; k != nil {
		if *k < 1 {
			return invalid("generationConfig.topK must be positive.")
		}
		q.Extra = append(q.Extra, llm.Field{Name: "top_k", Value: json.RawMessage(strconv.Itoa(*k))})
	}
	for _, p := range []struct {
		name string
		v    *float64
	}{{"presence_penalty", g.PresencePenalty}, {"frequency_penalty", g.FrequencyPenalty}} {
		if p.v != nil {
			q.Extra = append(q.Extra, llm.Field{Name: p.name, Value: json.RawMessage(strconv.FormatFloat(*p.v, 'g', -1, 64))})
		}
	}
	for _, m := range g.ResponseModalities {
		if m != "TEXT" && m != "text" {
			return invalid("generationConfig.responseModalities: the gateway answers TEXT only, not " + strconv.Quote(m) + ".")
		}
	}
	if err := responseFormat(q, g); err != nil {
		return err
	}
	if t := g.ThinkingConfig; t != nil {
		r.Thoughts = t.IncludeThoughts
		q.ThinkingBudget = t.ThinkingBudget
		if e := effort(t); e != "" {
			q.Extra = append(q.Extra, llm.Field{Name: "reasoning_effort", Value: json.RawMessage(strconv.Quote(e))})
		}
	}
	return nil
}

// responseFormat maps responseMimeType and its schema to the Chat response_format:
// application/json is json_object, with a schema json_schema.
func responseFormat(q *llm.Request, g *wire.GenerationConfig) error {
	schema := g.ResponseJSONSchema
	if len(schema) == 0 && len(g.ResponseSchema) > 0 {
		schema = openAPI(g.ResponseSchema)
	}
	switch g.ResponseMIMEType {
	case "", "text/plain":
		if len(schema) > 0 {
			return invalid("generationConfig.responseSchema needs responseMimeType application/json.")
		}
	case "application/json":
		if len(schema) == 0 {
			q.ResponseFormat = json.RawMessage(`{"type":"json_object"}`)
			return nil
		}
		var c bytes.Buffer
		if json.Compact(&c, schema) != nil {
			return invalid("generationConfig.responseSchema is not a JSON object.")
		}
		q.ResponseFormat = json.RawMessage(`{"type":"json_schema","json_schema":{"name":"response","schema":` + c.String() + `}}`)
	default:
		return invalid("generationConfig.responseMimeType " + strconv.Quote(g.ResponseMIMEType) +
			" is not served (text/plain or application/json).")
	}
	return nil
}

// effort is a thinking configuration as a reasoning_effort, the one the Gemini adapter maps
// back to a budget: 0 none, up to 1024 low, up to 8192 medium, more high; -1 (the model
// decides) none set. thinkingLevel low and high are their own names.
func effort(t *wire.ThinkingConfig) string {
	switch t.ThinkingLevel {
	case "low", "LOW", "minimal", "MINIMAL":
		return "low"
	case "medium", "MEDIUM":
		return "medium"
	case "high", "HIGH":
		return "high"
	}
	if t.ThinkingBudget == nil {
		return ""
	}
	switch b := *t.ThinkingBudget; {
	case b < 0:
		return ""
	case b == 0:
		return "none"
	case b <= 1024:
		return "low"
	case b <= 8192:
		return "medium"
	}
	return "high"
}

// Estimate is the input tokens of a request by the gateway's rule of thumb, about four
// bytes a token of its text, tool definitions included: what countTokens answers when no
// target of the alias can count.
func Estimate(q *llm.Request) int {
	n := 0
	for _, m := range q.Messages {
		n += 4
		for _, p := range m.Parts {
			n += len(p.Text) / 4
			if p.Type == llm.PartImage {
				n += 258 // Gemini's count for an image up to 384 pixels a side
			}
		}
		for _, c := range m.ToolCalls {
			n += (len(c.Name) + len(c.Arguments)) / 4
		}
	}
	for _, t := range q.Tools {
		n += (len(t.Name) + len(t.Description) + len(t.Parameters)) / 4
	}
	return max(n, 1)
}
