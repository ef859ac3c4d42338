package gemini

import (
	"encoding/base64"
	"encoding/json"
	"mime"
	"path"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/translate"
	"github.com/sluice-gw/sluice/internal/schema/gemini"
)

// syntheticID prefixes the tool call ids the adapter makes up for calls Gemini gave none:
// they are the client's handles, never sent back to Gemini.
const syntheticID = "gemini_call_"

// Thinking budgets per reasoning_effort, in tokens; none and minimal turn thinking off where
// the model allows it.
var budgets = map[string]int{"none": 0, "minimal": 0, "low": 1024, "medium": 8192, "high": 24576}

// encodeRequest writes the streamGenerateContent body of req. What cannot be translated
// without changing the answer's meaning is an *llm.Error with status 400. The client's cache
// breakpoints (llm.Cache) are left out: Gemini caches implicitly, or through cachedContent,
// which only a Gemini client's own body (Native) names (issue 46).
func encodeRequest(req *llm.Request) ([]byte, error) {
	if req.Logprobs {
		return nil, unsupported("logprobs", "logprobs are not available from Gemini targets")
	}
	system, contents, err := translateMessages(req.Messages)
	if err != nil {
		return nil, err
	}
	w := gemini.Request{Contents: contents, SystemInstruction: system}
	g := &gemini.GenerationConfig{MaxOutputTokens: req.MaxTokens, Temperature: req.Temperature, TopP: req.TopP, Seed: req.Seed}
	if g.MaxOutputTokens == nil {
		g.MaxOutputTokens = req.MaxCompletionTokens
	}
	if req.N > 1 {
		g.CandidateCount = req.N
	}
	for _, s := range req.Stop {
		if s != "" {
			g.StopSequences = append(g.StopSequences, s)
		}
	}
	if err := responseFormat(g, req.ResponseFormat); err != nil {
		return nil, err
	}
	for _, f := range req.Extra {
		switch f.Name {
		case "reasoning_effort":
			var effort string
			json.Unmarshal(f.Value, &effort)
			if b, ok := budgets[effort]; ok {
				g.ThinkingConfig = &gemini.ThinkingConfig{ThinkingBudget: &b, IncludeThoughts: b > 0}
			}
		case "top_k":
			var k int
			if json.Unmarshal(f.Value, &k) == nil && k > 0 {
				g.TopK = &k
			}
		case "presence_penalty":
			json.Unmarshal(f.Value, &g.PresencePenalty)
		case "frequency_penalty":
			json.Unmarshal(f.Value, &g.FrequencyPenalty)
		}
	}
	if b := req.ThinkingBudget; b != nil {
		// The client's own budget (Anthropic's budget_tokens, Gemini's), over the effort's.
		g.ThinkingConfig = &gemini.ThinkingConfig{ThinkingBudget: b, IncludeThoughts: *b != 0}
	}
	if len(req.Tools) > 0 {
		var decls []gemini.FunctionDeclaration
		for _, t := range req.Tools {
			decls = append(decls, gemini.FunctionDeclaration{Name: t.Name, Description: t.Description,
				ParametersJSONSchema: translate.CompactOr(t.Parameters, `{"type":"object","properties":{}}`)})
		}
		w.Tools = []gemini.Tool{{FunctionDeclarations: decls}}
		if w.ToolConfig, err = toolConfig(req.ToolChoice); err != nil {
			return nil, err
		}
	}
	if !emptyConfig(g) {
		w.GenerationConfig = g
	}
	b, err := json.Marshal(&w)
	if err != nil {
		return nil, &llm.Error{Kind: llm.Internal, Message: "gemini: cannot encode the request", Err: err}
	}
	return b, nil
}

func emptyConfig(g *gemini.GenerationConfig) bool {
	b, _ := json.Marshal(g)
	return string(b) == "{}"
}

// responseFormat maps response_format: json_object to JSON output, json_schema to JSON
// output constrained by the schema.
func responseFormat(g *gemini.GenerationConfig, raw json.RawMessage) error {
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &rf) != nil {
		return nil
	}
	switch rf.Type {
	case "json_object":
		g.ResponseMIMEType = "application/json"
	case "json_schema":
		g.ResponseMIMEType = "application/json"
		g.ResponseJSONSchema = translate.CompactOr(rf.JSONSchema.Schema, `{"type":"object"}`)
	}
	return nil
}

// toolConfig maps tool_choice: auto AUTO, none NONE, required ANY, a named function ANY
// with that name allowed.
func toolConfig(raw json.RawMessage) (*gemini.ToolConfig, error) {
	fc := &gemini.FunctionCallingConfig{}
	switch mode, name := translate.ToolChoice(raw); mode {
	case "":
		return nil, nil
	case "auto", "none":
		fc.Mode = strings.ToUpper(mode)
	case "required":
		fc.Mode = "ANY"
	case "function":
		fc.Mode, fc.AllowedFunctionNames = "ANY", []string{name}
	default:
		return nil, unsupported("tool_choice", "tool_choice %s has no Gemini equivalent", mode)
	}
	return &gemini.ToolConfig{FunctionCallingConfig: fc}, nil
}

// translateMessages turns Chat messages into the system instruction and the contents:
// roles user and model, tool results as functionResponse parts of a user turn (named by
// the call they answer), adjacent turns of one role merged.
func translateMessages(msgs []llm.Message) (*gemini.Content, []gemini.Content, error) {
	var system *gemini.Content
	var out []gemini.Content
	names := map[string]string{} // tool call id -> function name
	add := func(role string, parts []gemini.Part) {
		if len(parts) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = append(out[n-1].Parts, parts...)
			return
		}
		out = append(out, gemini.Content{Role: role, Parts: parts})
	}
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case llm.RoleSystem, llm.RoleDeveloper:
			for _, p := range m.Parts {
				if p.Text != "" {
					if system == nil {
						system = &gemini.Content{}
					}
					system.Parts = append(system.Parts, gemini.Part{Text: p.Text})
				}
			}
		case llm.RoleAssistant:
			for _, tc := range m.ToolCalls {
				names[tc.ID] = tc.Name
			}
			parts, err := modelParts(i, m)
			if err != nil {
				return nil, nil, err
			}
			add("model", parts)
		case llm.RoleTool:
			name, ok := names[m.ToolCallID]
			if !ok {
				return nil, nil, invalid("messages", "messages[%d]: tool result for %q answers no tool call of an earlier message", i, m.ToolCallID)
			}
			add("user", []gemini.Part{{FunctionResponse: &gemini.FunctionResponse{ID: realID(m.ToolCallID), Name: name,
				Response: toolResponse(translate.Text(m.Parts))}}})
		default:
			parts, err := userParts(i, m)
			if err != nil {
				return nil, nil, err
			}
			add("user", parts)
		}
	}
	return system, out, nil
}

// modelParts are an assistant message's parts, with the thought signatures of its
// reasoning put back on the parts they came on: a signature with a tool call's id on that
// call, another on the first part (Gemini refuses a function-calling turn without them).
func modelParts(i int, m *llm.Message) ([]gemini.Part, error) {
	var parts []gemini.Part
	for _, p := range m.Parts {
		if p.Text != "" {
			parts = append(parts, gemini.Part{Text: p.Text})
		}
	}
	if m.Refusal != "" {
		parts = append(parts, gemini.Part{Text: m.Refusal})
	}
	calls := map[string]int{}
	for _, tc := range m.ToolCalls {
		args, ok := translate.Object(tc.Arguments)
		if !ok {
			return nil, invalid("messages", "messages[%d]: the arguments of tool call %q are not a JSON object", i, tc.ID)
		}
		calls[tc.ID] = len(parts)
		parts = append(parts, gemini.Part{FunctionCall: &gemini.FunctionCall{ID: realID(tc.ID), Name: tc.Name, Args: args}})
	}
	for _, r := range m.Reasoning {
		if r.Encrypted == "" || !r.ReadBy("gemini") {
			// Thought summaries are not handed back, nor another provider's signature (an
			// Anthropic thinking signature, Responses encrypted content), which Gemini
			// would refuse (issue 46).
			continue
		}
		j, ok := calls[r.ID]
		if !ok {
			if len(parts) == 0 {
				parts = append(parts, gemini.Part{})
			}
			j = 0
		}
		if parts[j].ThoughtSignature == "" {
			parts[j].ThoughtSignature = r.Encrypted
		}
	}
	return parts, nil
}

func userParts(i int, m *llm.Message) ([]gemini.Part, error) {
	var parts []gemini.Part
	for _, p := range m.Parts {
		switch p.Type {
		case llm.PartImage:
			part, err := image(i, p.URL)
			if err != nil {
				return nil, err
			}
			parts = append(parts, part)
		case llm.PartFile, llm.PartAudio:
			part, err := media(i, &p)
			if err != nil {
				return nil, err
			}
			parts = append(parts, part)
		default:
			if p.Text != "" {
				parts = append(parts, gemini.Part{Text: p.Text})
			}
		}
	}
	return parts, nil
}

// media is a file or audio part: its bytes inline, a URL or a Files API file as file data.
// A file another provider stores is Unsupported.
func media(i int, p *llm.Part) (gemini.Part, error) {
	switch {
	case p.FileID != "" && p.FileOf != "gemini":
		return gemini.Part{}, llm.PartError("gemini", i, p, "only "+p.FileOf+" targets can read it")
	case p.FileID != "":
		return gemini.Part{FileData: &gemini.FileData{MIMEType: p.MediaType, FileURI: p.FileID}}, nil
	case p.Data != "":
		b, err := base64.StdEncoding.DecodeString(p.Data)
		if err != nil {
			return gemini.Part{}, invalid("messages", "messages[%d]: a %s part's data is not valid base64", i, p.Type)
		}
		return gemini.Part{InlineData: &gemini.Blob{MIMEType: p.MediaType, Data: b}}, nil
	}
	return gemini.Part{FileData: &gemini.FileData{MIMEType: p.MediaType, FileURI: p.URL}}, nil
}

// image is an image part: a base64 data: URL inline, any other URL (https, gs://, a Files
// API URI) as file data with the media type its extension names.
func image(i int, u string) (gemini.Part, error) {
	if mt, b, ok, err := translate.DataURL(u); ok {
		if err != nil {
			return gemini.Part{}, invalid("messages", "messages[%d]: %v", i, err)
		}
		return gemini.Part{InlineData: &gemini.Blob{MIMEType: mt, Data: b}}, nil
	}
	mt := mime.TypeByExtension(path.Ext(strings.SplitN(u, "?", 2)[0]))
	if mt == "" {
		mt = "image/jpeg"
	}
	return gemini.Part{FileData: &gemini.FileData{MIMEType: mt, FileURI: u}}, nil
}

// toolResponse is a tool's result as the object functionResponse.response must be: the
// result itself when it is a JSON object, else {"result": the text}.
func toolResponse(s string) json.RawMessage {
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
		return translate.CompactOr(json.RawMessage(t), "{}")
	}
	b, _ := json.Marshal(map[string]string{"result": s})
	return b
}

// realID is the id to send back for a call: none for the ids the adapter made up.
func realID(id string) string {
	if strings.HasPrefix(id, syntheticID) {
		return ""
	}
	return id
}

func invalid(param, format string, args ...any) *llm.Error {
	return translate.Invalid("gemini", param, format, args...)
}

func unsupported(param, format string, args ...any) *llm.Error {
	return translate.Unsupported("gemini", param, format, args...)
}
