package llm

import (
	"encoding/json"
	"strings"
)

// Role is the author of a message.
type Role string

const (
	RoleSystem    Role = "system"
	RoleDeveloper Role = "developer"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// PartType names the kind of a content part.
type PartType string

const (
	PartText  PartType = "text"
	PartImage PartType = "image_url"
)

// Part is one piece of a message's content.
type Part struct {
	Type PartType
	Text string
	// URL is an http(s) URL or a data: URL carrying the image bytes.
	URL    string
	Detail string
}

// ToolCall is a complete call of a tool by the model. Arguments is the raw JSON text the
// model wrote, unparsed: it is passed on byte for byte (after redaction).
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Message is one turn of the conversation.
type Message struct {
	Role Role
	// Parts is the content. A message whose content was a plain string has one text part and
	// Plain set, so an adapter can send a string back.
	Parts []Part
	Plain bool
	Name  string
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall
	// ToolCallID is the call a tool message answers.
	ToolCallID string
	// Refusal is an assistant message's refusal text, if any.
	Refusal string
	// Reasoning is the reasoning an assistant message carried, handed back to the provider
	// that wrote it (Anthropic thinking blocks with their signature, Responses reasoning items
	// with their encrypted content); adapters of other formats drop it.
	Reasoning []Reasoning
}

// Reasoning is one block of an assistant's reasoning, as its provider wrote it.
type Reasoning struct {
	// ID is the provider's id of the block (a Responses reasoning item id), if any.
	ID   string
	Text string
	// Encrypted is the opaque part (an Anthropic signature, Responses encrypted_content).
	Encrypted string
}

// Tool is a function the model may call.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments, raw.
	Parameters json.RawMessage
	Strict     *bool
}

// Request is the provider-neutral request of one round. Model is the upstream model name of
// the target being called: the chain sets it per attempt on a copy.
type Request struct {
	Model    string
	Messages []Message
	Tools    []Tool
	// ToolChoice and ResponseFormat are raw JSON in the Chat Completions shape; adapters for
	// other wire formats translate them.
	ToolChoice     json.RawMessage
	ResponseFormat json.RawMessage
	N              int
	MaxTokens      *int
	// MaxCompletionTokens keeps the field the client used, for OpenAI-compatible upstreams.
	MaxCompletionTokens *int
	Temperature         *float64
	TopP                *float64
	Stop                []string
	User                string
	Seed                *int64
	Logprobs            bool
	TopLogprobs         *int
	// Stream is what the client asked for. Upstream calls always stream; this only changes
	// how the answer is delivered.
	Stream bool
	// IncludeUsage is the client's stream_options.include_usage.
	IncludeUsage bool
	// PreviousResponseID, Store and Include are Responses API fields. Only a Responses
	// upstream can serve PreviousResponseID; Store nil means the gateway's default (false
	// upstream); Include lists extra output the client asked for
	// ("reasoning.encrypted_content").
	PreviousResponseID string
	Store              *bool
	Include            []string
	// KeepReasoning says the caller hands this round's reasoning back in a later round (a
	// frontend run's tool rounds, DESIGN §8): an adapter whose upstream keeps nothing between
	// calls asks for what it needs to do so (a Responses reasoning model's encrypted content).
	KeepReasoning bool
	// Metadata is the client's metadata object, raw.
	Metadata json.RawMessage
	// Extra holds the raw JSON of top-level fields the gateway does not model, passed to
	// OpenAI-compatible upstreams unchanged, in the order they came.
	Extra []Field
	// Native is the client's own body when it came in a provider's wire format (the
	// Anthropic Messages API): the adapter of that format sends it as it came, for what a
	// translation through this vocabulary would lose (cache_control, thinking signatures
	// byte for byte, server tools, members the gateway does not model); every other adapter
	// ignores it and translates the rest of Request.
	Native *Native
}

// Native is a request in its provider's own wire format.
type Native struct {
	// Wire names the format: "anthropic" (the Messages API).
	Wire string
	// Body is the client's JSON object, raw; the adapter sets the target's model on it.
	Body json.RawMessage
	// Header are the client's headers of that wire the upstream must see (anthropic-beta,
	// anthropic-version), canonical names.
	Header map[string]string
	// Only names what only an adapter of Wire can carry (a server tool, a PDF document):
	// any other adapter refuses the request as Unsupported, naming them, so the chain moves
	// on rather than serve a different request.
	Only []string
}

// NativeOnly is the Unsupported error of an adapter of another format than the request's
// native one, when the request holds what only that format carries; nil when it holds
// nothing of the kind.
func (r *Request) NativeOnly(wire string) *Error {
	if r.Native == nil || r.Native.Wire == wire || len(r.Native.Only) == 0 {
		return nil
	}
	return &Error{Kind: Unsupported, Status: 400, Type: "invalid_request_error",
		Message: "only " + r.Native.Wire + " targets can serve " + strings.Join(r.Native.Only, ", ")}
}

// Field is one raw top-level JSON member.
type Field struct {
	Name  string
	Value json.RawMessage
}

// Clone returns a copy whose top-level fields can be changed without touching r. Slices
// are shared: callers must not mutate their elements.
func (r *Request) Clone() *Request {
	c := *r
	return &c
}
