package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
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
	// PartFile is a document (a PDF, plain text, ...) in a user message: its bytes (Data),
	// a URL the upstream fetches (URL), or a file stored by a provider (FileID), with its
	// MediaType and Filename when known.
	PartFile PartType = "file"
	// PartAudio is a recording in a user message: its bytes (Data) and MediaType
	// (audio/wav, audio/mp3, ...; AudioFormat names it the OpenAI way).
	PartAudio PartType = "input_audio"
)

// Part is one piece of a message's content. Every adapter handles each PartType
// explicitly: it translates a file or audio part to its wire's equivalent or refuses the
// request as Unsupported, naming the part, so the chain moves on to a target that can take
// it; none drops one silently.
type Part struct {
	Type PartType
	Text string
	// URL is an image's http(s) URL or data: URL carrying its bytes; a file's http(s) (or
	// gs://, s3://) URL.
	URL    string
	Detail string
	// Data is a file's or a recording's bytes, base64 (standard alphabet, no data: prefix).
	Data string
	// MediaType is a file's or a recording's media type, lower case; "" when not given.
	MediaType string
	// Filename is a file's name, when the client gave one.
	Filename string
	// FileID is a file a provider stores (an OpenAI file id, a Gemini Files API URI);
	// FileOf names that provider's wire ("openai", "gemini"): only its adapters can send it.
	FileID, FileOf string
	// Cache is the prompt-cache breakpoint the client put on this block, if any.
	Cache *Cache
}

// Cache is a prompt-cache breakpoint a client put on a block (Anthropic's cache_control,
// Bedrock's cachePoint): the provider may cache the prompt up to and including that block.
// It is a pointer in every llm value so that an adapter can tell the breakpoints apart
// (CachePlan) without changing a request whose slices it shares.
type Cache struct {
	// TTL is "" (the provider's default, 5 minutes) or "5m", or "1h".
	TTL string
}

// Long reports whether c asks for the 1-hour cache.
func (c *Cache) Long() bool { return c != nil && c.TTL == "1h" }

// DataURL is a file or recording's Data as a base64 data: URL (RFC 2397).
func (p *Part) DataURL() string {
	return "data:" + p.MediaType + ";base64," + p.Data
}

// Name is a file's name: the client's, else "file" with the extension of its media type
// (file.pdf, file.txt), for a wire that requires one.
func (p *Part) Name() string {
	if p.Filename != "" {
		return p.Filename
	}
	switch p.MediaType {
	case "text/plain":
		return "file.txt"
	case "":
		return "file"
	}
	if ext, _ := mime.ExtensionsByType(p.MediaType); len(ext) > 0 {
		return "file" + ext[0]
	}
	return "file"
}

// AudioFormat is the OpenAI name of an audio media type (wav, mp3; what follows "audio/"
// for the others); "" when it is not audio.
func AudioFormat(mediaType string) string {
	sub, ok := strings.CutPrefix(strings.ToLower(mediaType), "audio/")
	switch {
	case !ok:
		return ""
	case sub == "wav" || sub == "x-wav" || sub == "wave" || sub == "vnd.wave":
		return "wav"
	case sub == "mp3" || sub == "mpeg" || sub == "mpeg3" || sub == "x-mp3":
		return "mp3"
	}
	return sub
}

// AudioType is the media type of an OpenAI audio format: audio/wav, audio/mp3 (the names
// Gemini lists), audio/<format> for the others.
func AudioType(format string) string {
	return "audio/" + strings.ToLower(format)
}

// PartError is the Unsupported error of an adapter (provider names it) whose wire has no
// equivalent of message i's part p: nothing is sent, and the chain moves on to a target
// that may take it; when none can, the client gets a 400 naming the part.
func PartError(provider string, i int, p *Part, why string) *Error {
	what := string(p.Type) + " part"
	switch {
	case p.FileID != "":
		what = "file_id part (a file stored by " + p.FileOf + ")"
	case p.MediaType != "":
		what = string(p.Type) + " part of type " + p.MediaType
	}
	return &Error{Kind: Unsupported, Status: 400, Type: "invalid_request_error", Code: "unsupported_content",
		Param: "messages", Message: fmt.Sprintf("%s: messages[%d]: the %s cannot be sent to this target: %s", provider, i, what, why)}
}

// ToolCall is a complete call of a tool by the model. Arguments is the raw JSON text the
// model wrote, unparsed: it is passed on byte for byte (after redaction).
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
	// Cache is the breakpoint on the call's block (Anthropic tool_use), if any.
	Cache *Cache
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
	// Cache is the breakpoint on a tool message's own block (Anthropic tool_result, Bedrock
	// toolResult), after its parts; a breakpoint on a part is the part's Cache.
	Cache *Cache
}

// Reasoning is one block of an assistant's reasoning, as its provider wrote it.
type Reasoning struct {
	// ID is the provider's id of the block (a Responses reasoning item id), if any.
	ID   string
	Text string
	// Encrypted is the opaque part (an Anthropic or Bedrock signature, Responses
	// encrypted_content, a Gemini thoughtSignature), or a redacted block's data.
	Encrypted string
	// Redacted says the block is Anthropic redacted_thinking (Bedrock redactedContent):
	// Encrypted is its data and there is no text.
	Redacted bool
	// Wire names the format that wrote it ("anthropic", "bedrock", "responses", "gemini"),
	// "" when the client's wire does not say: only that format can read Encrypted back, so
	// an adapter of another format drops the block rather than send it a foreign signature.
	Wire string
}

// ReadBy reports whether an adapter of wire can hand r back: reasoning its own wire wrote,
// or one whose wire nobody named (the gateway's own tool rounds), and Claude's signatures
// between Anthropic and Bedrock ("signature values are compatible across platforms (Claude
// APIs, Amazon Bedrock, and Vertex AI)", Anthropic's thinking-encryption docs). Another
// format's opaque content (a Responses encrypted_content, a Gemini thoughtSignature, an
// Anthropic signature elsewhere) is a 400 there, so the adapter leaves it out.
func (r *Reasoning) ReadBy(wire string) bool {
	claude := func(w string) bool { return w == "anthropic" || w == "bedrock" }
	return r.Wire == "" || r.Wire == wire || claude(r.Wire) && claude(wire)
}

// ToolKind says what a tool is. Every adapter carries functions; the other kinds come from
// a Responses client (Codex) and are translated into functions, or refused, by Function.
type ToolKind uint8

const (
	// ToolFunction is a function with a JSON Schema of its arguments.
	ToolFunction ToolKind = iota
	// ToolCustom is a Responses custom tool: its input is free-form text (Format, raw, may
	// give it a grammar). Elsewhere it is a function of one string parameter, "input": its
	// calls carry Arguments {"input":"<text>"} in every llm value, whatever the wire.
	ToolCustom
	// ToolHosted is a tool the provider runs itself (Responses web_search, file_search,
	// code_interpreter, image_generation, mcp, local_shell, ...): Name is its type. Only a
	// Responses upstream, reached through Request.Native, can carry it.
	ToolHosted
)

// Tool is a tool the model may call.
type Tool struct {
	Kind ToolKind
	// Name is the name the model calls the tool by on every wire but Responses: a function
	// of a Responses namespace is flattened to FlatName(Namespace, name).
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments, raw.
	Parameters json.RawMessage
	Strict     *bool
	// Namespace is the Responses namespace a function belongs to, if any.
	Namespace string
	// Format is a custom tool's input format, raw (Responses {"type":"grammar",...}).
	Format json.RawMessage
	// Cache is the breakpoint on the tool's definition, if any.
	Cache *Cache
}

// FlatName is the one name of a function of a Responses namespace, for wires that have no
// namespaces: namespace, "__", name, with the underscores around the join trimmed (the name
// Codex itself uses where a boundary loses the split).
func FlatName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return strings.TrimRight(namespace, "_") + "__" + strings.TrimLeft(name, "_")
}

// CustomArgs is the llm form of a custom tool's input: the arguments of a function of one
// string parameter, {"input":"<text>"} (ToolCustom).
func CustomArgs(input string) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(input) // a string always encodes
	return `{"input":` + strings.TrimSuffix(b.String(), "\n") + `}`
}

// CustomInput is the inverse of CustomArgs: the input of a custom tool's call, or args as
// they are when the model wrote something else.
func CustomInput(args string) string {
	var a struct {
		Input *string `json:"input"`
	}
	if json.Unmarshal([]byte(args), &a) == nil && a.Input != nil {
		return *a.Input
	}
	return args
}

// customParams is the schema of a custom tool as a function.
const customParams = `{"type":"object","properties":{"input":{"type":"string","description":"The tool's free-form input."}},"required":["input"],"additionalProperties":false}`

// Function returns t as a function, for a wire that has functions only: a custom tool
// becomes a function of one string parameter "input" (its grammar, if any, joins the
// description, so the model still knows the format); a hosted tool cannot be carried and
// is an Unsupported error naming it, so the chain moves on to a target that can, and so is
// a namespace's function whose flat name is longer than a function's 64 characters.
func (t *Tool) Function() (Tool, error) {
	if t.Namespace != "" && len(t.Name) > 64 {
		return Tool{}, &Error{Kind: Unsupported, Status: 400, Param: "tools", Code: "unsupported_tool",
			Message: "tool '" + t.Name + "' of a namespace is longer than the 64 characters of a function name once flattened"}
	}
	switch t.Kind {
	case ToolCustom:
		f := Tool{Name: t.Name, Description: t.Description, Parameters: json.RawMessage(customParams)}
		var g struct{ Type, Syntax, Definition string }
		if json.Unmarshal(t.Format, &g) == nil && g.Type == "grammar" && g.Definition != "" {
			f.Description = strings.TrimSpace(f.Description + "\n\nThe input must match this " + g.Syntax + " grammar:\n" + g.Definition)
		}
		return f, nil
	case ToolHosted:
		return Tool{}, &Error{Kind: Unsupported, Status: 400, Param: "tools", Code: "unsupported_tool",
			Message: "tool '" + t.Name + "' is run by OpenAI's Responses API and needs a Responses target (api: responses)"}
	}
	return *t, nil
}

// Hosted names the request's hosted tools (ToolHosted), in order; nil: none.
func (r *Request) Hosted() []string {
	var names []string
	for _, t := range r.Tools {
		if t.Kind == ToolHosted {
			names = append(names, t.Name)
		}
	}
	return names
}

// DropHosted leaves the hosted tools out of r, for a chain none of whose targets can run them
// (an alias's hosted_tools: drop): the other adapters then translate the rest. With no tool
// left, tool_choice goes too, which a Chat upstream refuses without tools. Tools is a new
// slice: a clone of r keeps its own. Native is not touched: only a Responses target, which
// can run them, reads it.
func (r *Request) DropHosted() {
	var kept []Tool
	for _, t := range r.Tools {
		if t.Kind != ToolHosted {
			kept = append(kept, t)
		}
	}
	if r.Tools = kept; len(kept) == 0 {
		r.ToolChoice = nil
	}
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
	// Stream is what the client asked for. Upstream calls stream unless Plain; this only
	// changes how the answer is delivered.
	Stream bool
	// Plain is the target's upstream: plain (DESIGN §1), set by the chain per attempt: a
	// request that is not Stream may be one non-streamed upstream call, whose answer the
	// provider still hands over as the events a stream of it would carry. A provider whose
	// wire has no such call streams.
	Plain bool
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
	// ThinkingBudget is the client's thinking budget in tokens when its wire names one
	// (Anthropic's thinking.budget_tokens, Gemini's thinkingBudget: 0 off, -1 the model
	// decides); nil: none. An adapter whose upstream takes a budget (Anthropic, Gemini) uses
	// it as it is; reasoning_effort in Extra says the same coarsely for the others.
	ThinkingBudget *int
	// Session is the stable key of the conversation the request continues, first found of
	// (KeySession): the X-Sluice-Session header, the client's prompt_cache_key, Anthropic
	// metadata.user_id, the Chat or Responses user field; "" when the client named none. An
	// OpenAI adapter sends a hash of it as prompt_cache_key when the client set none (never
	// the raw value: it may be a user id); affinity keeps the conversation on one target by
	// it (else by CachePrefix).
	Session string
	// PromptCacheKey is the client's own prompt_cache_key (OpenAI), sent as it is.
	PromptCacheKey string
	// Metadata is the client's metadata object, raw.
	Metadata json.RawMessage
	// Extra holds the raw JSON of top-level fields the gateway does not model, passed to
	// OpenAI-compatible upstreams unchanged, in the order they came.
	Extra []Field
	// Native is the client's own body when it came in a provider's wire format (the
	// Anthropic Messages API, or OpenAI's Responses API): the adapter of that format sends it
	// as it came, for what a translation through this vocabulary would lose (cache_control,
	// thinking signatures byte for byte, server, hosted, custom and namespace tools, members
	// the gateway does not model); every other adapter ignores it and translates the rest of
	// Request, which says the same in llm terms (also for fallback, guardrails and
	// accounting). Input redaction masks both (Native.Mask).
	Native *Native
	// Files are the file parts of a multipart request (an audio transcription's, an image
	// edit's: issue 48), kept so that every attempt sends them whole; Extra then holds the
	// other parts, as JSON strings, in order.
	Files []FilePart
}

// Native is a request in its provider's own wire format.
type Native struct {
	// Wire names the format: "anthropic" (the Messages API), "responses" (OpenAI's
	// Responses API) or "gemini" (the Gemini API, Google's models on Vertex too).
	Wire string
	// Body is the client's JSON object, raw ("anthropic", "gemini"); the anthropic adapter
	// sets the target's model on it, the gemini one puts the model in the path.
	Body json.RawMessage
	// Fields are the client's members as they came, in order ("responses"): the adapter
	// sends them unchanged but for model and stream.
	Fields []Field
	// Header are the client's headers of that wire the upstream must see (anthropic-beta,
	// anthropic-version), canonical names.
	Header map[string]string
	// Only names what only an adapter of Wire can carry (a server tool, a PDF document):
	// any other adapter refuses the request as Unsupported, naming them, so the chain moves
	// on rather than serve a different request.
	Only []string
}

// Mask masks secrets in the client's own body with json, a JSON-aware redaction (so it still
// parses): an Anthropic body whole, a Responses body's input and instructions (every other
// member is the client's configuration, kept byte for byte). A nil Native has nothing.
func (n *Native) Mask(json func(string) string) {
	if n == nil {
		return
	}
	if n.Body != nil {
		n.Body = []byte(json(string(n.Body)))
	}
	for i := range n.Fields {
		if f := &n.Fields[i]; f.Name == "input" || f.Name == "instructions" {
			f.Value = []byte(json(string(f.Value)))
		}
	}
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

// Mask masks secrets in the prompt before any provider sees it: text parts with text, tool
// call arguments with json (a JSON-aware redaction, so they still parse), and the client's
// own body (Native.Mask). It changes r in place: the decoded request is the handler's own.
func (r *Request) Mask(text, json func(string) string) {
	for i := range r.Messages {
		m := &r.Messages[i]
		for j := range m.Parts {
			if m.Parts[j].Type == PartText {
				m.Parts[j].Text = text(m.Parts[j].Text)
			}
		}
		for j := range m.ToolCalls {
			m.ToolCalls[j].Arguments = json(m.ToolCalls[j].Arguments)
		}
	}
	r.Native.Mask(json)
}
