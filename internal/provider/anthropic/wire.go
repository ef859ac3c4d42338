package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/sluice-gw/sluice/internal/llm"
)

// The Messages request body. Field order is the encoding order, so the body is
// deterministic; omitempty leaves out what the client did not ask for.
type wireRequest struct {
	Model         string      `json:"model"`
	MaxTokens     int         `json:"max_tokens"`
	System        content     `json:"system,omitempty"`
	Messages      []turn      `json:"messages"`
	Tools         []wireTool  `json:"tools,omitempty"`
	ToolChoice    *toolChoice `json:"tool_choice,omitempty"`
	Thinking      *thinking   `json:"thinking,omitempty"`
	StopSequences []string    `json:"stop_sequences,omitempty"`
	Temperature   *float64    `json:"temperature,omitempty"`
	TopP          *float64    `json:"top_p,omitempty"`
	TopK          *int        `json:"top_k,omitempty"`
	Metadata      *metadata   `json:"metadata,omitempty"`
	Stream        bool        `json:"stream"`
}

type turn struct {
	Role    string  `json:"role"`
	Content content `json:"content"`
}

// content is a list of content blocks. A list of one text block is sent as a plain string,
// which the API takes as the same thing, and which keeps simple requests simple.
type content []block

func (c content) MarshalJSON() ([]byte, error) {
	if len(c) == 1 && c[0].Type == "text" {
		return marshal(c[0].Text)
	}
	return marshal([]block(c))
}

// marshal is json.Marshal without HTML escaping: "<" and "&" go as they are, as clients
// wrote them, and the body stays readable in logs and tests.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// block is one content block; only the fields of its Type are set.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Source    *imageSource    `json:"source,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   content         `json:"content,omitempty"`
	Thinking  string          `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
}

type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type wireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type toolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

type thinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type metadata struct {
	UserID string `json:"user_id"`
}

// invalid is the error for a request the adapter cannot translate because it is wrong (a
// malformed image URL, arguments that are not JSON): 400, nothing sent.
func invalid(param, format string, args ...any) *llm.Error {
	return &llm.Error{Kind: llm.Invalid, Status: 400, Type: "invalid_request_error", Param: param,
		Message: "anthropic: " + fmt.Sprintf(format, args...)}
}

// unsupported is the error for a well-formed request that asks for what Anthropic does not
// have (n > 1, logprobs): nothing is sent, and the chain tries a target that may have it.
func unsupported(param, format string, args ...any) *llm.Error {
	e := invalid(param, format, args...)
	e.Kind = llm.Unsupported
	return e
}
