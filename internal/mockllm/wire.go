package mockllm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

// The OpenAI Chat Completions wire types the mock writes, fields in the order OpenAI sends
// them (see testdata/openai-chat-*.sse).

type chunk struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	SystemFingerprint string          `json:"system_fingerprint"`
	Choices           []chunkChoice   `json:"choices"`
	Usage             json.RawMessage `json:"usage,omitempty"` // null on every chunk when usage was asked for
}

type chunkChoice struct {
	Index        int             `json:"index"`
	Delta        delta           `json:"delta"`
	Logprobs     json.RawMessage `json:"logprobs"` // nil encodes as null
	FinishReason *string         `json:"finish_reason"`
}

// delta holds raw JSON for content and refusal so that the role chunk can say
// "content":null or "content":"" exactly as OpenAI does.
type delta struct {
	Role             string          `json:"role,omitempty"`
	Content          json.RawMessage `json:"content,omitempty"`
	Refusal          json.RawMessage `json:"refusal,omitempty"`
	Reasoning        *string         `json:"reasoning,omitempty"`
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCall      `json:"tool_calls,omitempty"`
}

type toolCall struct {
	Index    *int     `json:"index,omitempty"` // in deltas only
	ID       string   `json:"id,omitempty"`
	Type     string   `json:"type,omitempty"`
	Function function `json:"function"`
}

type function struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type logprob struct {
	Token       string     `json:"token"`
	Logprob     float64    `json:"logprob"`
	Bytes       []int      `json:"bytes"`
	TopLogprobs []struct{} `json:"top_logprobs"`
}

type usage struct {
	PromptTokens            int `json:"prompt_tokens"`
	CompletionTokens        int `json:"completion_tokens"`
	TotalTokens             int `json:"total_tokens"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

type completion struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	Created           int64              `json:"created"`
	Model             string             `json:"model"`
	SystemFingerprint string             `json:"system_fingerprint"`
	Choices           []completionChoice `json:"choices"`
	Usage             usage              `json:"usage"`
}

type completionChoice struct {
	Index        int             `json:"index"`
	Message      message         `json:"message"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

type message struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	Refusal          json.RawMessage `json:"refusal"`
	Reasoning        *string         `json:"reasoning,omitempty"`
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCall      `json:"tool_calls,omitempty"`
}

// apiError is the body of every OpenAI error, in a response or inside a stream.
type apiError struct {
	Error struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Param   json.RawMessage `json:"param"`
		Code    json.RawMessage `json:"code"`
	} `json:"error"`
}

func newAPIError(typ, code, msg string) apiError {
	var e apiError
	e.Error.Message, e.Error.Type = msg, typ
	if code != "" {
		e.Error.Code = marshal(code)
	}
	return e
}

// openaiErrors writes errors in OpenAI's shape, for the dialects that share it.
type openaiErrors struct{}

func (openaiErrors) errorBody(_ int, e apiError) any { return e }

// scripted answers an HTTP fault, or an in-stream one asked without streaming: error and
// event answer 500, ratelimit 429.
func (openaiErrors) scripted(sc *script, model string) (int, any) {
	status := sc.status
	switch {
	case status != 0:
	case sc.fail == "ratelimit":
		status = http.StatusTooManyRequests
	default:
		status = http.StatusInternalServerError
	}
	return status, scriptedError(sc, model)
}

// scriptedError is the error body of a fail= fault, OpenAI's shape and wording per status
// unless code=, type= or msg= say otherwise.
func scriptedError(sc *script, model string) apiError {
	typ, code, msg := "invalid_request_error", "", "mockllm: scripted error"
	switch st := sc.status; {
	case sc.fail == "ratelimit" || st == http.StatusTooManyRequests:
		typ, code, msg = "requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try again in 1s."
	case st == http.StatusUnauthorized:
		code, msg = "invalid_api_key", "Incorrect API key provided: sk-mock****. You can find your API key at https://platform.openai.com/account/api-keys."
	case st == http.StatusNotFound:
		code, msg = "model_not_found", fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model)
	case st == http.StatusRequestEntityTooLarge:
		code, msg = "request_too_large", "Request body too large."
	case st == http.StatusServiceUnavailable:
		typ, msg = "server_error", "The engine is currently overloaded, please try again later."
	case st >= 500 || st == 0:
		typ, msg = "server_error", "The server had an error while processing your request. Sorry about that!"
	}
	if sc.typ != "" {
		typ = sc.typ
	}
	if sc.code != "" {
		code = sc.code
	}
	if sc.msg != "" {
		msg = sc.msg
	}
	return newAPIError(typ, code, msg)
}

// marshal encodes v without HTML escaping (OpenAI sends '<' and '&' as is) and without the
// encoder's trailing newline. The types above cannot fail to encode.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("mockllm: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// dataFrame is one SSE event carrying v as JSON.
func dataFrame(v any) []byte {
	return append(append([]byte("data: "), marshal(v)...), "\n\n"...)
}

var doneFrame = []byte("data: [DONE]\n\n")
