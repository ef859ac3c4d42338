package openai

import "encoding/json"

// The Chat Completions wire (POST /v1/chat/completions), fields in the order OpenAI sends
// them (recordings in internal/provider/openai/testdata/openai-chat-*.sse).

// ChatRequest is the part of a Chat Completions request body a lenient upstream reads (the
// mock): the model, the conversation, n and the streaming options. Everything else a client
// may send is left to the reader, since the gateway's adapter writes the request itself.
type ChatRequest struct {
	Model         string         `json:"model"`
	Messages      []ChatMessage  `json:"messages"`
	N             *int           `json:"n"`
	Stream        bool           `json:"stream"`
	StreamOptions *StreamOptions `json:"stream_options"`
}

// ChatMessage is one message of a request's conversation. Content is raw: a string, an
// array of ContentPart, or null (an assistant turn of only tool calls). Name is the
// participant's name; an assistant turn may carry its refusal and its tool calls, a tool
// message the id of the call it answers.
type ChatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name,omitempty"`
	Refusal    *string         `json:"refusal,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolCalls  []ToolCall      `json:"tool_calls,omitempty"`
	// CacheControl is the Anthropic-style breakpoint that LiteLLM, OpenRouter and OpenCode
	// accept on an OpenAI-format message: not OpenAI's, raw (the client wire checks it).
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

// ContentPart is one part of a message's content: text, image_url with its ImageURL, file
// with its File, input_audio with its InputAudio.
type ContentPart struct {
	Type       string      `json:"type"`
	Text       *string     `json:"text,omitempty"`
	ImageURL   *ImageURL   `json:"image_url,omitempty"`
	File       *File       `json:"file,omitempty"`
	InputAudio *InputAudio `json:"input_audio,omitempty"`
	// CacheControl is a breakpoint on the part, as on ChatMessage: not OpenAI's.
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

// CacheControl is an Anthropic-style cache breakpoint, {"type":"ephemeral","ttl":"1h"}, as
// OpenAI-format gateways accept it on messages, content parts and tools (issue 46).
type CacheControl struct {
	Type string `json:"type"`
	TTL  string `json:"ttl,omitempty"`
}

// File is a file part's file: its bytes as a base64 data: URL (FileData) with its
// Filename, or an uploaded file's FileID.
type File struct {
	FileData string `json:"file_data,omitempty"`
	FileID   string `json:"file_id,omitempty"`
	Filename string `json:"filename,omitempty"`
}

// InputAudio is an input_audio part's recording: base64 Data in Format (wav or mp3). The
// Responses API's input_audio part has the same member.
type InputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

// ImageURL is an image_url part's image: a URL (https: or a data: URL) and the detail
// (auto, low, high) the model should see it at.
type ImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

// StreamOptions is a streamed request's stream_options: include_usage asks for a last chunk
// with usage (and "usage":null on every chunk before it).
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// ChatCompletion is the non-streamed answer, object "chat.completion".
type ChatCompletion struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	SystemFingerprint string       `json:"system_fingerprint,omitempty"`
	Choices           []ChatChoice `json:"choices"`
	Usage             Usage        `json:"usage"`
}

// ChatChoice is one choice of a ChatCompletion. Logprobs nil encodes as null.
type ChatChoice struct {
	Index        int              `json:"index"`
	Message      AssistantMessage `json:"message"`
	Logprobs     json.RawMessage  `json:"logprobs"`
	FinishReason string           `json:"finish_reason"`
}

// AssistantMessage is the message of a choice. Content and Refusal are null when nil (a
// refusal has null content, an answer null refusal, a tool-call-only answer null content);
// reasoning (OpenRouter, vLLM) or reasoning_content (DeepSeek) is present only when set.
type AssistantMessage struct {
	Role             string     `json:"role"`
	Content          *string    `json:"content"`
	Refusal          *string    `json:"refusal"`
	Reasoning        *string    `json:"reasoning,omitempty"`
	ReasoningContent *string    `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
}

// ToolCall is a function call of the model, whole, in a message.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall is a tool call's function: its name, and its arguments as the model's JSON
// text, a string.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolCallDelta is a fragment of a tool call in a chunk's delta. Index says which call of
// the choice it adds to; the first fragment of a call carries its id, type and name, the
// later ones only arguments.
type ToolCallDelta struct {
	Index    int           `json:"index"`
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type,omitempty"`
	Function FunctionDelta `json:"function"`
}

// FunctionDelta is a fragment of a tool call's function: the name (first fragment only) and
// more of the arguments' text.
type FunctionDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments Text   `json:"arguments"`
}

// ChatCompletionChunk is one event of a streamed answer, object "chat.completion.chunk".
// Usage is raw for the three shapes the wire has: absent (include_usage not asked), null
// (asked, on every chunk but the last) and the Usage object (the last chunk, with no
// choices).
type ChatCompletionChunk struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	SystemFingerprint string          `json:"system_fingerprint,omitempty"`
	Choices           []ChunkChoice   `json:"choices"`
	Usage             json.RawMessage `json:"usage,omitempty"`
}

// ChunkChoice is one choice of a chunk. Logprobs nil and FinishReason nil encode as null.
type ChunkChoice struct {
	Index        int             `json:"index"`
	Delta        ChunkDelta      `json:"delta"`
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

// ChunkDelta is what a chunk adds to a choice. Content and Refusal are raw so that a writer
// can say each of the wire's forms: absent (nil), null, "" (the role chunk says
// "content":"" before text, "content":null before a refusal) and text.
type ChunkDelta struct {
	Role             string          `json:"role,omitempty"`
	Content          json.RawMessage `json:"content,omitempty"`
	Refusal          json.RawMessage `json:"refusal,omitempty"`
	Reasoning        *string         `json:"reasoning,omitempty"`
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCallDelta `json:"tool_calls,omitempty"`
}

// TokenLogprob is one token of a choice's logprobs.content (or .refusal) list.
type TokenLogprob struct {
	Token       string     `json:"token"`
	Logprob     float64    `json:"logprob"`
	Bytes       []int      `json:"bytes"`
	TopLogprobs []struct{} `json:"top_logprobs"`
}

// Usage is the token count of an answer. prompt_tokens include the cached ones, and
// completion_tokens the reasoning ones. PromptTokensDetails is left out when nil, as older
// models and many compatible servers do.
type Usage struct {
	PromptTokens            int                     `json:"prompt_tokens"`
	CompletionTokens        int                     `json:"completion_tokens"`
	TotalTokens             int                     `json:"total_tokens"`
	PromptTokensDetails     *PromptTokensDetails    `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails CompletionTokensDetails `json:"completion_tokens_details"`
}

// PromptTokensDetails is usage.prompt_tokens_details: how many prompt tokens came from the
// prompt cache.
type PromptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// CompletionTokensDetails is usage.completion_tokens_details: how many completion tokens
// the model spent reasoning.
type CompletionTokensDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// ErrorResponse is the body of every OpenAI error, an HTTP answer's or one sent inside a
// stream: {"error": {...}}.
type ErrorResponse struct {
	Error Error `json:"error"`
}

// Error is OpenAI's error object. Param and Code are raw because servers send each as a
// string, a number or null; status_code is Groq's, inside its in-stream errors.
type Error struct {
	Message    string          `json:"message"`
	Type       string          `json:"type"`
	Param      json.RawMessage `json:"param"`
	Code       json.RawMessage `json:"code"`
	StatusCode int             `json:"status_code,omitempty"`
}

// ToolChoice is a request's tool_choice when it is an object (the strings none, auto and
// required are plain JSON strings): a named function, a named custom tool, or allowed_tools,
// a mode (auto or required) and the tools the model may pick from, each in ToolChoice's
// shape (raw).
type ToolChoice struct {
	Type         string        `json:"type"`
	Function     *ToolName     `json:"function,omitempty"`
	Custom       *ToolName     `json:"custom,omitempty"`
	AllowedTools *AllowedTools `json:"allowed_tools,omitempty"`
}

// ToolName names a tool in a ToolChoice.
type ToolName struct {
	Name string `json:"name"`
}

// AllowedTools is the allowed_tools member of a ToolChoice.
type AllowedTools struct {
	Mode  string            `json:"mode"`
	Tools []json.RawMessage `json:"tools"`
}

// ResponseFormat is a request's response_format: text, json_object, or json_schema with
// its JSONSchema.
type ResponseFormat struct {
	Type       string      `json:"type"`
	JSONSchema *JSONSchema `json:"json_schema,omitempty"`
}

// JSONSchema is the json_schema member of a ResponseFormat; Schema is the JSON schema the
// answer must follow, raw.
type JSONSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}
