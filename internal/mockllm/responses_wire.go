package mockllm

import (
	"encoding/json"
	"net/http"
)

// The OpenAI Responses request the mock reads and the wire types it writes, fields in the
// order of the recent recordings (testdata/openai-responses-*.sse).

// responsesRequest is the part of a Responses request the mock reads or echoes back.
type responsesRequest struct {
	Model              string          `json:"model"`
	Input              json.RawMessage `json:"input"` // a string or items
	Instructions       json.RawMessage `json:"instructions"`
	MaxOutputTokens    *int            `json:"max_output_tokens"`
	PreviousResponseID *string         `json:"previous_response_id"`
	Reasoning          json.RawMessage `json:"reasoning"`
	Store              *bool           `json:"store"`
	Temperature        *float64        `json:"temperature"`
	TopP               *float64        `json:"top_p"`
	ToolChoice         json.RawMessage `json:"tool_choice"`
	Tools              json.RawMessage `json:"tools"`
	Metadata           json.RawMessage `json:"metadata"`
	Include            []string        `json:"include"`
	Stream             bool            `json:"stream"`
}

func (responsesDialect) parse(_ http.Header, raw []byte) (*request, *reqError) {
	var req responsesRequest
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
	var items []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Output  json.RawMessage `json:"output"`
	}
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

type responseObject struct {
	ID                 string          `json:"id"`
	Object             string          `json:"object"`
	CreatedAt          int64           `json:"created_at"`
	Status             string          `json:"status"`
	Background         bool            `json:"background"`
	Error              *responseError  `json:"error"`
	IncompleteDetails  *incomplete     `json:"incomplete_details"`
	Instructions       json.RawMessage `json:"instructions"`
	MaxOutputTokens    *int            `json:"max_output_tokens"`
	MaxToolCalls       *int            `json:"max_tool_calls"`
	Model              string          `json:"model"`
	Output             []any           `json:"output"`
	ParallelToolCalls  bool            `json:"parallel_tool_calls"`
	PreviousResponseID *string         `json:"previous_response_id"`
	Reasoning          json.RawMessage `json:"reasoning"`
	ServiceTier        string          `json:"service_tier"`
	Store              bool            `json:"store"`
	Temperature        float64         `json:"temperature"`
	Text               json.RawMessage `json:"text"`
	ToolChoice         json.RawMessage `json:"tool_choice"`
	Tools              json.RawMessage `json:"tools"`
	TopP               float64         `json:"top_p"`
	Truncation         string          `json:"truncation"`
	Usage              *responsesUsage `json:"usage"`
	User               *string         `json:"user"`
	Metadata           json.RawMessage `json:"metadata"`
}

// responseError is response.error of a failed response.
type responseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type incomplete struct {
	Reason string `json:"reason"`
}

type responsesUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

type reasoningItem struct {
	ID               string        `json:"id"`
	Type             string        `json:"type"`
	EncryptedContent string        `json:"encrypted_content,omitempty"`
	Summary          []summaryPart `json:"summary"`
}

type summaryPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type messageItem struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Status  string `json:"status"`
	Content []any  `json:"content"`
	Role    string `json:"role"`
}

type outputText struct {
	Type        string     `json:"type"`
	Annotations []struct{} `json:"annotations"`
	Logprobs    []struct{} `json:"logprobs"`
	Text        string     `json:"text"`
}

type refusalPart struct {
	Type    string `json:"type"`
	Refusal string `json:"refusal"`
}

type functionCallItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
}

// responsesEvent is every streamed event; each type sets its own fields.
type responsesEvent struct {
	Type           string          `json:"type"`
	SequenceNumber int             `json:"sequence_number"`
	Response       *responseObject `json:"response,omitempty"`
	ItemID         string          `json:"item_id,omitempty"`
	OutputIndex    *int            `json:"output_index,omitempty"`
	ContentIndex   *int            `json:"content_index,omitempty"`
	SummaryIndex   *int            `json:"summary_index,omitempty"`
	Item           any             `json:"item,omitempty"`
	Part           any             `json:"part,omitempty"`
	Delta          *string         `json:"delta,omitempty"`
	Text           *string         `json:"text,omitempty"`
	Refusal        *string         `json:"refusal,omitempty"`
	Arguments      *string         `json:"arguments,omitempty"`
	Logprobs       json.RawMessage `json:"logprobs,omitempty"`
	// The error event, flat (openai-go's ResponseErrorEvent) or nested (what the API sends).
	Code    *string               `json:"code,omitempty"`
	Message *string               `json:"message,omitempty"`
	Param   json.RawMessage       `json:"param,omitempty"`
	Error   *responsesNestedError `json:"error,omitempty"`
}

type responsesNestedError struct {
	Type    string          `json:"type"`
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Param   json.RawMessage `json:"param"`
}
