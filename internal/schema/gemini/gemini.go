// Package gemini holds the wire types of the Gemini generateContent API, once: the request
// body, the GenerateContentResponse each streamGenerateContent?alt=sse event carries, and the
// Google error body. The Gemini API (generativelanguage.googleapis.com) and Vertex AI
// (aiplatform.googleapis.com, publishers/google/models) speak the same types. It decides
// nothing; the adapter (provider/gemini) translates.
//
// Shapes: https://ai.google.dev/api/generate-content and https://ai.google.dev/api/caching#Content.
package gemini

import (
	"encoding/json"
	"net/http"
)

// Request is a generateContent / streamGenerateContent body. The model is in the URL.
type Request struct {
	Contents          []Content         `json:"contents"`
	SystemInstruction *Content          `json:"systemInstruction,omitempty"`
	Tools             []Tool            `json:"tools,omitempty"`
	ToolConfig        *ToolConfig       `json:"toolConfig,omitempty"`
	GenerationConfig  *GenerationConfig `json:"generationConfig,omitempty"`
	SafetySettings    json.RawMessage   `json:"safetySettings,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"` // Vertex only
}

// Content is one turn: role "user" or "model" (none in systemInstruction).
type Content struct {
	Role  string `json:"role,omitempty"`
	Parts []Part `json:"parts"`
}

// Part is a union of its data fields (text, inlineData, fileData, functionCall,
// functionResponse), with Thought marking a thought summary and ThoughtSignature the opaque
// signature of the model's thinking, which a later turn must hand back on the same part.
type Part struct {
	Text             string            `json:"text,omitempty"`
	InlineData       *Blob             `json:"inlineData,omitempty"`
	FileData         *FileData         `json:"fileData,omitempty"`
	FunctionCall     *FunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *FunctionResponse `json:"functionResponse,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
}

// Blob is inline bytes (base64 in JSON).
type Blob struct {
	MIMEType string `json:"mimeType"`
	Data     []byte `json:"data"`
}

// FileData is a file by URI (https, gs://, a Files API URI).
type FileData struct {
	MIMEType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

// FunctionCall is a call the model made, whole: its args a JSON object. ID is set by newer
// models and must then be echoed by the FunctionResponse.
type FunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// FunctionResponse is the result of a call: Response a JSON object.
type FunctionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// Tool holds function declarations.
type Tool struct {
	FunctionDeclarations []FunctionDeclaration `json:"functionDeclarations,omitempty"`
}

// FunctionDeclaration describes one function. ParametersJSONSchema takes a JSON Schema as
// it is (Parameters takes only the OpenAPI subset).
type FunctionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
	// Parameters is the OpenAPI subset of a schema (types may be upper-case: "OBJECT").
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// Response and ResponseJSONSchema describe what the function returns; Behavior is
	// BLOCKING or NON_BLOCKING (Live API).
	Response           json.RawMessage `json:"response,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
	Behavior           string          `json:"behavior,omitempty"`
}

// ToolConfig says how the model may call functions.
type ToolConfig struct {
	FunctionCallingConfig *FunctionCallingConfig `json:"functionCallingConfig,omitempty"`
}

// FunctionCallingConfig: Mode AUTO, ANY or NONE; AllowedFunctionNames with ANY.
type FunctionCallingConfig struct {
	Mode                 string   `json:"mode"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

// GenerationConfig are the sampling and output options.
type GenerationConfig struct {
	MaxOutputTokens    *int            `json:"maxOutputTokens,omitempty"`
	Temperature        *float64        `json:"temperature,omitempty"`
	TopP               *float64        `json:"topP,omitempty"`
	TopK               *int            `json:"topK,omitempty"`
	StopSequences      []string        `json:"stopSequences,omitempty"`
	CandidateCount     int             `json:"candidateCount,omitempty"`
	Seed               *int64          `json:"seed,omitempty"`
	PresencePenalty    *float64        `json:"presencePenalty,omitempty"`
	FrequencyPenalty   *float64        `json:"frequencyPenalty,omitempty"`
	ResponseMIMEType   string          `json:"responseMimeType,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
	ResponseSchema     json.RawMessage `json:"responseSchema,omitempty"` // the OpenAPI subset
	ResponseModalities []string        `json:"responseModalities,omitempty"`
	ThinkingConfig     *ThinkingConfig `json:"thinkingConfig,omitempty"`
}

// ThinkingConfig sets the thinking budget in tokens (0 turns thinking off where the model
// allows it, -1 lets the model decide) and asks for thought summaries.
type ThinkingConfig struct {
	ThinkingBudget  *int `json:"thinkingBudget,omitempty"`
	IncludeThoughts bool `json:"includeThoughts,omitempty"`
	// ThinkingLevel is the newer models' coarse setting: "low" or "high".
	ThinkingLevel string `json:"thinkingLevel,omitempty"`
}

// Response is a GenerateContentResponse: with alt=sse, each event's data is one, carrying the
// new parts of each candidate. An error inside the stream comes as an Error body instead.
type Response struct {
	Candidates     []Candidate     `json:"candidates,omitempty"`
	PromptFeedback *PromptFeedback `json:"promptFeedback,omitempty"`
	UsageMetadata  *UsageMetadata  `json:"usageMetadata,omitempty"`
	ModelVersion   string          `json:"modelVersion,omitempty"`
	ResponseID     string          `json:"responseId,omitempty"`
	Error          *Status         `json:"error,omitempty"`
}

// Candidate is one choice. FinishReason is set on its last chunk: STOP, MAX_TOKENS, SAFETY,
// RECITATION, LANGUAGE, OTHER, BLOCKLIST, PROHIBITED_CONTENT, SPII, MALFORMED_FUNCTION_CALL,
// IMAGE_SAFETY, UNEXPECTED_TOOL_CALL, TOO_MANY_TOOL_CALLS.
type Candidate struct {
	Content      *Content `json:"content,omitempty"`
	FinishReason string   `json:"finishReason,omitempty"`
	Index        int      `json:"index"`
}

// PromptFeedback says why a prompt was blocked (no candidates then): BlockReason SAFETY,
// OTHER, BLOCKLIST, PROHIBITED_CONTENT, IMAGE_SAFETY.
type PromptFeedback struct {
	BlockReason string `json:"blockReason,omitempty"`
}

// UsageMetadata is the token usage, cumulative: the last chunk's is the answer's.
// promptTokenCount includes cachedContentTokenCount; candidatesTokenCount leaves out
// thoughtsTokenCount.
type UsageMetadata struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	TotalTokenCount         int `json:"totalTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount,omitempty"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount,omitempty"`
	ToolUsePromptTokenCount int `json:"toolUsePromptTokenCount,omitempty"`
}

// ErrorBody is Google's error body, {"error": {...}}: a non-2xx answer, or an event inside a
// stream.
type ErrorBody struct {
	Error *Status `json:"error"`
}

// Status is a google.rpc.Status as JSON: Code the HTTP status, Status the canonical code
// (INVALID_ARGUMENT, RESOURCE_EXHAUSTED, UNAVAILABLE, ...).
type Status struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
}

// StatusOf is the canonical code Google names an HTTP status by, in its error bodies'
// status member (google.rpc.Code).
func StatusOf(code int) string {
	switch code {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusMethodNotAllowed, http.StatusUnprocessableEntity:
		return "FAILED_PRECONDITION"
	case http.StatusConflict:
		return "ABORTED"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case 499:
		return "CANCELLED"
	case http.StatusNotImplemented:
		return "UNIMPLEMENTED"
	case http.StatusBadGateway, http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	}
	if code >= 500 {
		return "INTERNAL"
	}
	return "FAILED_PRECONDITION"
}
