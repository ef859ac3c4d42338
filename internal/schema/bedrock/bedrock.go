// Package bedrock holds the wire types of the Amazon Bedrock Runtime Converse and
// ConverseStream APIs (POST /model/{modelId}/converse-stream), once: the request body, the
// JSON payload of each event-stream frame, and the error bodies. It decides nothing; the
// adapter (provider/bedrock) translates, and its tests' upstream speaks these types.
//
// Shapes: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html
// and the types it links (ContentBlock, ContentBlockDeltaEvent, TokenUsage, ...). Unions
// (ContentBlock, ToolChoice, ContentBlockDelta) are structs with one member set.
package bedrock

import "encoding/json"

// Request is the ConverseStream body. The model id is in the URL path, not here.
type Request struct {
	Messages                     []Message         `json:"messages"`
	System                       []SystemBlock     `json:"system,omitempty"`
	InferenceConfig              *InferenceConfig  `json:"inferenceConfig,omitempty"`
	ToolConfig                   *ToolConfig       `json:"toolConfig,omitempty"`
	AdditionalModelRequestFields json.RawMessage   `json:"additionalModelRequestFields,omitempty"`
	RequestMetadata              map[string]string `json:"requestMetadata,omitempty"`
}

// Message is one turn: role "user" or "assistant".
type Message struct {
	Role    string         `json:"role"`
	Content []ContentBlock `json:"content"`
}

// SystemBlock is one element of the system prompt: text, or a cache point after it.
type SystemBlock struct {
	Text       string      `json:"text,omitempty"`
	CachePoint *CachePoint `json:"cachePoint,omitempty"`
}

// CachePoint marks the end of a prompt prefix to cache (CachePointBlock): Type is
// "default"; TTL is "5m" or "1h" (Claude 4.5 and later), none for the 5-minute default.
// Bedrock refuses a later cache point with a longer TTL than an earlier one (tools, then
// system, then messages).
type CachePoint struct {
	Type string `json:"type"`
	TTL  string `json:"ttl,omitempty"`
}

// ContentBlock is a union: exactly one member is set.
type ContentBlock struct {
	Text             *string           `json:"text,omitempty"`
	Image            *Image            `json:"image,omitempty"`
	Document         *Document         `json:"document,omitempty"`
	Audio            *Audio            `json:"audio,omitempty"`
	ToolUse          *ToolUse          `json:"toolUse,omitempty"`
	ToolResult       *ToolResult       `json:"toolResult,omitempty"`
	ReasoningContent *ReasoningContent `json:"reasoningContent,omitempty"`
	CachePoint       *CachePoint       `json:"cachePoint,omitempty"`
}

// Image is an image block: format png, jpeg, gif or webp; the bytes base64 in JSON.
type Image struct {
	Format string      `json:"format"`
	Source ImageSource `json:"source"`
}

// Document is a document block: format pdf, csv, doc, docx, xls, xlsx, html, txt or md;
// a name of alphanumerics, single spaces, hyphens, parentheses and square brackets; its
// bytes or S3 location.
type Document struct {
	Format string      `json:"format"`
	Name   string      `json:"name"`
	Source ImageSource `json:"source"`
}

// Audio is an audio block: format mp3, wav, flac, ogg, aac, opus, webm, ...; its bytes or
// S3 location.
type Audio struct {
	Format string      `json:"format"`
	Source ImageSource `json:"source"`
}

// ImageSource holds an image's, a document's or a recording's bytes (base64 in JSON) or an
// S3 location.
type ImageSource struct {
	Bytes      []byte      `json:"bytes,omitempty"`
	S3Location *S3Location `json:"s3Location,omitempty"`
}

// S3Location is an object in S3.
type S3Location struct {
	URI string `json:"uri"`
}

// ToolUse is a call the model made: its input is a JSON value (an object).
type ToolUse struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

// ToolResult answers a ToolUse; Status is "success" or "error" (optional).
type ToolResult struct {
	ToolUseID string              `json:"toolUseId"`
	Content   []ToolResultContent `json:"content"`
	Status    string              `json:"status,omitempty"`
}

// ToolResultContent is a union: text or json.
type ToolResultContent struct {
	Text *string         `json:"text,omitempty"`
	JSON json.RawMessage `json:"json,omitempty"`
}

// ReasoningContent is a union: the reasoning text with its signature, or redacted content
// (base64 bytes in JSON).
type ReasoningContent struct {
	ReasoningText   *ReasoningText `json:"reasoningText,omitempty"`
	RedactedContent []byte         `json:"redactedContent,omitempty"`
}

// ReasoningText is reasoning as the model wrote it, with the signature the model needs to
// accept it back on the next turn.
type ReasoningText struct {
	Text      string `json:"text"`
	Signature string `json:"signature,omitempty"`
}

// InferenceConfig are the sampling options every model takes.
type InferenceConfig struct {
	MaxTokens     *int     `json:"maxTokens,omitempty"`
	Temperature   *float64 `json:"temperature,omitempty"`
	TopP          *float64 `json:"topP,omitempty"`
	StopSequences []string `json:"stopSequences,omitempty"`
}

// ToolConfig lists the tools and how the model may choose them.
type ToolConfig struct {
	Tools      []Tool      `json:"tools"`
	ToolChoice *ToolChoice `json:"toolChoice,omitempty"`
}

// Tool is a union: a tool specification or a cache point after the tools.
type Tool struct {
	ToolSpec   *ToolSpec   `json:"toolSpec,omitempty"`
	CachePoint *CachePoint `json:"cachePoint,omitempty"`
}

// ToolSpec describes one function.
type ToolSpec struct {
	Name        string      `json:"name"`
	Description string      `json:"description,omitempty"`
	InputSchema InputSchema `json:"inputSchema"`
}

// InputSchema wraps the JSON Schema of a tool's input.
type InputSchema struct {
	JSON json.RawMessage `json:"json"`
}

// ToolChoice is a union: auto, any (some tool) or one named tool.
type ToolChoice struct {
	Auto *struct{}     `json:"auto,omitempty"`
	Any  *struct{}     `json:"any,omitempty"`
	Tool *ToolChoiceOf `json:"tool,omitempty"`
}

// ToolChoiceOf names the tool the model must call.
type ToolChoiceOf struct {
	Name string `json:"name"`
}

// Event-stream frames. Each frame has the headers :message-type (event, exception or
// error), :event-type or :exception-type, and :content-type application/json; its payload
// is the JSON of the member named by the header, not wrapped in it. Bedrock adds a "p"
// field of random padding to event payloads, which carries nothing.
const (
	HeaderMessageType   = ":message-type"
	HeaderEventType     = ":event-type"
	HeaderExceptionType = ":exception-type"
	HeaderErrorCode     = ":error-code"
	HeaderErrorMessage  = ":error-message"
	HeaderContentType   = ":content-type"

	MessageEvent     = "event"
	MessageException = "exception"
	MessageError     = "error"

	EventMessageStart      = "messageStart"
	EventContentBlockStart = "contentBlockStart"
	EventContentBlockDelta = "contentBlockDelta"
	EventContentBlockStop  = "contentBlockStop"
	EventMessageStop       = "messageStop"
	EventMetadata          = "metadata"

	// The exceptions ConverseStream sends inside a 200 stream.
	ExceptionInternalServer     = "internalServerException"
	ExceptionModelStreamError   = "modelStreamErrorException"
	ExceptionValidation         = "validationException"
	ExceptionThrottling         = "throttlingException"
	ExceptionServiceUnavailable = "serviceUnavailableException"
)

// MessageStart opens the answer.
type MessageStart struct {
	Role string `json:"role"`
}

// ContentBlockStart opens a block that does not start with plain text: a tool use.
type ContentBlockStart struct {
	ContentBlockIndex int `json:"contentBlockIndex"`
	Start             struct {
		ToolUse *struct {
			ToolUseID string `json:"toolUseId"`
			Name      string `json:"name"`
		} `json:"toolUse,omitempty"`
	} `json:"start"`
}

// ContentBlockDelta is a piece of a block: text, a tool input fragment (JSON text), or
// reasoning (text, signature, or redacted content).
type ContentBlockDelta struct {
	ContentBlockIndex int `json:"contentBlockIndex"`
	Delta             struct {
		Text    *string `json:"text,omitempty"`
		ToolUse *struct {
			Input string `json:"input"`
		} `json:"toolUse,omitempty"`
		ReasoningContent *struct {
			Text            string `json:"text,omitempty"`
			Signature       string `json:"signature,omitempty"`
			RedactedContent []byte `json:"redactedContent,omitempty"`
		} `json:"reasoningContent,omitempty"`
	} `json:"delta"`
}

// ContentBlockStop closes a block.
type ContentBlockStop struct {
	ContentBlockIndex int `json:"contentBlockIndex"`
}

// MessageStop ends the message with its stop reason: end_turn, tool_use, max_tokens,
// stop_sequence, guardrail_intervened, content_filtered, model_context_window_exceeded,
// malformed_model_output, malformed_tool_use.
type MessageStop struct {
	StopReason                    string          `json:"stopReason"`
	AdditionalModelResponseFields json.RawMessage `json:"additionalModelResponseFields,omitempty"`
}

// Metadata follows messageStop: the usage and latency of the call.
type Metadata struct {
	Usage   *Usage `json:"usage,omitempty"`
	Metrics *struct {
		LatencyMs int64 `json:"latencyMs"`
	} `json:"metrics,omitempty"`
}

// Usage is Bedrock's token usage. inputTokens leaves out the cached tokens
// (cacheReadInputTokens, cacheWriteInputTokens); totalTokens counts them all.
type Usage struct {
	InputTokens           int `json:"inputTokens"`
	OutputTokens          int `json:"outputTokens"`
	TotalTokens           int `json:"totalTokens"`
	CacheReadInputTokens  int `json:"cacheReadInputTokens,omitempty"`
	CacheWriteInputTokens int `json:"cacheWriteInputTokens,omitempty"`
	// CacheDetails splits cacheWriteInputTokens by TTL (1h before 5m); none when nothing
	// was written.
	CacheDetails []CacheDetail `json:"cacheDetails,omitempty"`
}

// CacheDetail is the cache writes of one TTL ("5m" or "1h").
type CacheDetail struct {
	TTL         string `json:"ttl"`
	InputTokens int    `json:"inputTokens"`
}

// Exception is the payload of an exception frame, and the body of a non-2xx answer (which
// also names its type in the X-Amzn-ErrorType header or "__type").
type Exception struct {
	Type               string `json:"__type,omitempty"`
	Message            string `json:"message"`
	OriginalStatusCode int    `json:"originalStatusCode,omitempty"`
	OriginalMessage    string `json:"originalMessage,omitempty"`
}
