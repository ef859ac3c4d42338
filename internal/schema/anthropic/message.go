package anthropic

import "encoding/json"

// The answer and its stream, fields in the order the API sends them
// (internal/mockllm/testdata/anthropic-*.sse).

// Message is the answer: the non-streamed body, and the message of message_start (with
// empty content and null stop_reason there). Content holds TextBlock, ThinkingBlock,
// RedactedThinkingBlock and ToolUseBlock values.
type Message struct {
	ID           string  `json:"id"`
	Type         string  `json:"type"`
	Role         string  `json:"role"`
	Model        string  `json:"model"`
	Content      []any   `json:"content"`
	StopReason   *string `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
	Usage        Usage   `json:"usage"`
}

// Usage is a message's token count. input_tokens leave out the tokens read from the prompt
// cache (cache_read_input_tokens) and those written to it (cache_creation_input_tokens);
// cache_creation splits the written ones by TTL (nil: not known, left out).
type Usage struct {
	InputTokens              int            `json:"input_tokens"`
	CacheCreationInputTokens int            `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int            `json:"cache_read_input_tokens"`
	CacheCreation            *CacheCreation `json:"cache_creation,omitempty"`
	OutputTokens             int            `json:"output_tokens"`
}

// CacheCreation is usage.cache_creation: the tokens written to the prompt cache with each
// TTL (cache_control ttl 5m, the default, and 1h), which are priced apart; their sum is
// cache_creation_input_tokens.
type CacheCreation struct {
	Ephemeral5mInputTokens int `json:"ephemeral_5m_input_tokens"`
	Ephemeral1hInputTokens int `json:"ephemeral_1h_input_tokens"`
}

// DeltaUsage is the usage of message_delta: cumulative, and any member may be absent (older
// API versions send only output_tokens), so a reader keeps the last value of an absent one.
// A reader of message_start's usage may decode it as a DeltaUsage too, to tell absent from
// zero.
type DeltaUsage struct {
	InputTokens              *int           `json:"input_tokens,omitempty"`
	CacheCreationInputTokens *int           `json:"cache_creation_input_tokens,omitempty"`
	CacheReadInputTokens     *int           `json:"cache_read_input_tokens,omitempty"`
	CacheCreation            *CacheCreation `json:"cache_creation,omitempty"`
	OutputTokens             *int           `json:"output_tokens,omitempty"`
}

// Delta returns u with every member set: what message_delta carries in current API
// versions.
func (u Usage) Delta() DeltaUsage {
	return DeltaUsage{&u.InputTokens, &u.CacheCreationInputTokens, &u.CacheReadInputTokens, u.CacheCreation, &u.OutputTokens}
}

// TextBlock is a text block of an answer; content_block_start has it with empty text.
type TextBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// ThinkingBlock is a thinking block: the model's reasoning and the signature that lets it
// be handed back in a later request. content_block_start has both empty.
type ThinkingBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

// RedactedThinkingBlock is reasoning the API keeps encrypted: Data is opaque, handed back
// as it came.
type RedactedThinkingBlock struct {
	Type string `json:"type"`
	Data string `json:"data"`
}

// ToolUseBlock is a call of a client tool; Input is its arguments as a JSON object ({} in
// content_block_start, the arguments coming as input_json_delta fragments).
type ToolUseBlock struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// MessageStartEvent opens a stream: the Message with no content yet.
type MessageStartEvent struct {
	Type    string  `json:"type"`
	Message Message `json:"message"`
}

// ContentBlockStartEvent opens content block Index; ContentBlock is one of the block types
// above, empty.
type ContentBlockStartEvent struct {
	Type         string `json:"type"`
	Index        int    `json:"index"`
	ContentBlock any    `json:"content_block"`
}

// ContentBlockDeltaEvent adds to content block Index; Delta is a TextDelta,
// InputJSONDelta, ThinkingDelta or SignatureDelta.
type ContentBlockDeltaEvent struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
	Delta any    `json:"delta"`
}

// TextDelta is text_delta: more of a text block.
type TextDelta struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// InputJSONDelta is input_json_delta: a fragment of a tool_use block's input, JSON text
// that is whole only once every fragment came.
type InputJSONDelta struct {
	Type        string `json:"type"`
	PartialJSON string `json:"partial_json"`
}

// ThinkingDelta is thinking_delta: more of a thinking block.
type ThinkingDelta struct {
	Type     string `json:"type"`
	Thinking string `json:"thinking"`
}

// SignatureDelta is signature_delta: a thinking block's signature, just before its stop.
type SignatureDelta struct {
	Type      string `json:"type"`
	Signature string `json:"signature"`
}

// ContentBlockStopEvent closes content block Index.
type ContentBlockStopEvent struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
}

// MessageDeltaEvent comes once the content is over: why the message stopped, and the usage
// so far.
type MessageDeltaEvent struct {
	Type  string       `json:"type"`
	Delta MessageDelta `json:"delta"`
	Usage DeltaUsage   `json:"usage"`
}

// MessageDelta is the delta of message_delta: stop_reason (end_turn, max_tokens,
// stop_sequence, tool_use, pause_turn, refusal, ...) and the stop sequence that matched.
type MessageDelta struct {
	StopReason   string  `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
}

// TypeEvent is an event with nothing but its type: ping, message_stop.
type TypeEvent struct {
	Type string `json:"type"`
}

// ErrorResponse is the body of every error, an HTTP answer's or an error event's:
// {"type":"error","error":{...}}.
type ErrorResponse struct {
	Type  string `json:"type"`
	Error Error  `json:"error"`
}

// Error is the error object: its type (invalid_request_error, authentication_error,
// rate_limit_error, overloaded_error, api_error, ...) and message.
type Error struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}
