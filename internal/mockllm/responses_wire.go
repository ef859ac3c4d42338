package mockllm

import (
	"encoding/json"
	"net/http"

	"github.com/sluice-gw/sluice/internal/schema/openai"
)

// The OpenAI Responses request the mock reads and the wire types it writes, fields in the
// order of the recent recordings (testdata/openai-responses-*.sse).

func (responsesDialect) parse(_ http.Header, raw []byte) (*request, *reqError) {
	var req openai.ResponsesRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, badJSON(err)
	}
	if req.Model == "" {
		return nil, &reqError{http.StatusBadRequest, newAPIError("invalid_request_error", "missing_required_parameter",
			"Missing required parameter: 'model'.")}
	}
	r := &request{model: req.Model, stream: req.Stream, single: true}
	r.promptBytes = len(text(req.Instructions))
	var s string
	var items []openai.InputItem
	if json.Unmarshal(req.Input, &s) == nil {
		r.user, r.promptBytes = s, r.promptBytes+len(s)
	} else if json.Unmarshal(req.Input, &items) == nil {
		for _, it := range items {
			t := text(it.Content, "input_text", "output_text", "text")
			r.promptBytes += len(t) + len(text(it.Output))
			if it.Role == "user" {
				r.user = t
			}
			r.afterTool, r.toolText = it.Type == "function_call_output", text(it.Output)
		}
	}
	e := &responsesEcho{instructions: rawOr(req.Instructions, "null"), reasoning: rawOr(req.Reasoning,
		`{"effort":null,"summary":null}`), toolChoice: rawOr(req.ToolChoice, `"auto"`),
		tools: rawOr(req.Tools, "[]"), metadata: rawOr(req.Metadata, "{}"),
		maxOutputTokens: req.MaxOutputTokens, previousResponseID: req.PreviousResponseID,
		store: req.Store == nil || *req.Store, temperature: 1, topP: 1}
	if req.Temperature != nil {
		e.temperature = *req.Temperature
	}
	if req.TopP != nil {
		e.topP = *req.TopP
	}
	for _, inc := range req.Include {
		e.encrypted = e.encrypted || inc == "reasoning.encrypted_content"
	}
	r.responses = e
	return r, nil
}

// responsesEcho is what a Response object repeats of its request.
type responsesEcho struct {
	instructions, reasoning, toolChoice, tools, metadata json.RawMessage
	maxOutputTokens                                      *int
	previousResponseID                                   *string
	store                                                bool
	temperature, topP                                    float64
	encrypted                                            bool // include: reasoning.encrypted_content
}
