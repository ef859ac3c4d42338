package openai

import "encoding/json"

// The Responses wire (POST /v1/responses), fields in the order of the recent recordings
// (internal/mockllm/testdata/openai-responses-*.sse).

// ResponsesRequest is the part of a Responses request body a lenient upstream reads or
// repeats in its Response object (the mock). Members whose shape varies (input: a string or
// items; tools; reasoning; ...) are raw.
type ResponsesRequest struct {
	Model              string          `json:"model"`
	Input              json.RawMessage `json:"input"`
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

// InputItem is one item of a request's input, with the members of every item type; its
// type decides which apply: a message (role, and content: a string or InputPart values; type
// "message" or left out), a function_call (call_id, name, arguments), a
// function_call_output (call_id, output: a string or parts), a reasoning item handed back
// (id, summary, encrypted_content), a custom_tool_call (call_id, name, input) and its
// custom_tool_call_output (call_id, output). A function call of a namespace tool names its
// namespace.
type InputItem struct {
	Type             string          `json:"type,omitempty"`
	ID               string          `json:"id,omitempty"`
	Role             string          `json:"role,omitempty"`
	Content          json.RawMessage `json:"content,omitempty"`
	CallID           string          `json:"call_id,omitempty"`
	Name             string          `json:"name,omitempty"`
	Namespace        string          `json:"namespace,omitempty"`
	Arguments        *string         `json:"arguments,omitempty"`
	Input            *string         `json:"input,omitempty"`
	Output           json.RawMessage `json:"output,omitempty"`
	Summary          []SummaryPart   `json:"summary,omitempty"`
	EncryptedContent string          `json:"encrypted_content,omitempty"`
}

// InputPart is one part of an input message's content: input_text or output_text (Text),
// refusal (Refusal), input_image (ImageURL or FileID, and Detail), input_file (FileData, a
// base64 data: URL, with Filename; FileURL; or FileID), input_audio (InputAudio).
type InputPart struct {
	Type       string      `json:"type"`
	Text       *string     `json:"text,omitempty"`
	Refusal    *string     `json:"refusal,omitempty"`
	ImageURL   string      `json:"image_url,omitempty"`
	FileID     string      `json:"file_id,omitempty"`
	Detail     string      `json:"detail,omitempty"`
	FileData   string      `json:"file_data,omitempty"`
	FileURL    string      `json:"file_url,omitempty"`
	Filename   string      `json:"filename,omitempty"`
	InputAudio *InputAudio `json:"input_audio,omitempty"`
}

// Response is the Response object: in response.created, .in_progress, .completed,
// .incomplete and .failed events, and as the non-streamed answer. Output holds the output
// items (ReasoningItem, MessageItem, FunctionCallItem); the raw members repeat what the
// request said (or the API's defaults).
type Response struct {
	ID                 string             `json:"id"`
	Object             string             `json:"object"`
	CreatedAt          int64              `json:"created_at"`
	Status             string             `json:"status"`
	Background         bool               `json:"background"`
	Error              *ResponseError     `json:"error"`
	IncompleteDetails  *IncompleteDetails `json:"incomplete_details"`
	Instructions       json.RawMessage    `json:"instructions"`
	MaxOutputTokens    *int               `json:"max_output_tokens"`
	MaxToolCalls       *int               `json:"max_tool_calls"`
	Model              string             `json:"model"`
	Output             []any              `json:"output"`
	ParallelToolCalls  bool               `json:"parallel_tool_calls"`
	PreviousResponseID *string            `json:"previous_response_id"`
	Reasoning          json.RawMessage    `json:"reasoning"`
	ServiceTier        string             `json:"service_tier"`
	Store              bool               `json:"store"`
	Temperature        float64            `json:"temperature"`
	Text               json.RawMessage    `json:"text"`
	ToolChoice         json.RawMessage    `json:"tool_choice"`
	Tools              json.RawMessage    `json:"tools"`
	TopP               float64            `json:"top_p"`
	Truncation         string             `json:"truncation"`
	Usage              *ResponseUsage     `json:"usage"`
	User               *string            `json:"user"`
	Metadata           json.RawMessage    `json:"metadata"`
}

// ResponseError is response.error of a failed response, as OpenAI writes it. A reader that
// must take a code that is a number or null uses Error instead.
type ResponseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// IncompleteDetails says why a response is incomplete: max_output_tokens or content_filter.
type IncompleteDetails struct {
	Reason string `json:"reason"`
}

// ResponseUsage is a response's token count: input_tokens include the cached ones, and
// output_tokens the reasoning ones.
type ResponseUsage struct {
	InputTokens         int                 `json:"input_tokens"`
	InputTokensDetails  InputTokensDetails  `json:"input_tokens_details"`
	OutputTokens        int                 `json:"output_tokens"`
	OutputTokensDetails OutputTokensDetails `json:"output_tokens_details"`
	TotalTokens         int                 `json:"total_tokens"`
}

// InputTokensDetails is usage.input_tokens_details.
type InputTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// OutputTokensDetails is usage.output_tokens_details.
type OutputTokensDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// ReasoningItem is a reasoning output item: its summary parts, and its opaque
// encrypted_content when the request included reasoning.encrypted_content.
type ReasoningItem struct {
	ID               string        `json:"id"`
	Type             string        `json:"type"`
	EncryptedContent string        `json:"encrypted_content,omitempty"`
	Summary          []SummaryPart `json:"summary"`
}

// SummaryPart is one part of a reasoning item's summary, type summary_text.
type SummaryPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// MessageItem is an assistant message output item; Content holds OutputText and
// RefusalPart parts.
type MessageItem struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Status  string `json:"status"`
	Content []any  `json:"content"`
	Role    string `json:"role"`
}

// OutputText is a message's output_text part.
type OutputText struct {
	Type        string     `json:"type"`
	Annotations []struct{} `json:"annotations"`
	Logprobs    []struct{} `json:"logprobs"`
	Text        string     `json:"text"`
}

// RefusalPart is a message's refusal part.
type RefusalPart struct {
	Type    string `json:"type"`
	Refusal string `json:"refusal"`
}

// FunctionCallItem is a function_call output item; Arguments is the model's JSON text.
type FunctionCallItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
}

// ResponseEvent is every streamed event as a writer sends it: each type sets its own
// members and leaves the others out. The error event comes flat (code, message and param
// beside type, as openai-go's ResponseErrorEvent has it) or nested under error (what the
// API sends).
type ResponseEvent struct {
	Type           string          `json:"type"`
	SequenceNumber int             `json:"sequence_number"`
	Response       *Response       `json:"response,omitempty"`
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
	Code           *string         `json:"code,omitempty"`
	Message        *string         `json:"message,omitempty"`
	Param          json.RawMessage `json:"param,omitempty"`
	Error          *NestedError    `json:"error,omitempty"`
}

// NestedError is the error member of a nested error event.
type NestedError struct {
	Type    string          `json:"type"`
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Param   json.RawMessage `json:"param"`
}
