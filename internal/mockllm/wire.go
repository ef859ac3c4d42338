package mockllm

import (
	"bytes"
	"encoding/json"
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
