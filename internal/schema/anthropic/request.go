package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
)

// MessagesRequest is the request body. Field order is the encoding order, so a body is
// deterministic; omitempty leaves out what the caller did not set.
type MessagesRequest struct {
	Model         string         `json:"model"`
	MaxTokens     int            `json:"max_tokens"`
	System        Content        `json:"system,omitempty"`
	Messages      []MessageParam `json:"messages"`
	Tools         []Tool         `json:"tools,omitempty"`
	ToolChoice    *ToolChoice    `json:"tool_choice,omitempty"`
	Thinking      *Thinking      `json:"thinking,omitempty"`
	StopSequences []string       `json:"stop_sequences,omitempty"`
	Temperature   *float64       `json:"temperature,omitempty"`
	TopP          *float64       `json:"top_p,omitempty"`
	TopK          *int           `json:"top_k,omitempty"`
	Metadata      *Metadata      `json:"metadata,omitempty"`
	Stream        bool           `json:"stream"`
}

// MessageParam is one turn of the conversation: role user or assistant.
type MessageParam struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// Content is a list of content blocks: a message's content, the system prompt, a
// tool_result's content. On the wire each may also be a plain string, which the API takes as
// one text block: Content decodes a string so, and encodes a list of one plain text block
// (no cache_control, no citations) as a string, which keeps simple requests simple.
type Content []Block

// MarshalJSON implements json.Marshaler, without HTML escaping ("<" and "&" go as written).
func (c Content) MarshalJSON() ([]byte, error) {
	if len(c) == 1 && c[0].Type == "text" && c[0].CacheControl == nil && c[0].Citations == nil {
		return Marshal(c[0].Text)
	}
	return Marshal([]Block(c))
}

// UnmarshalJSON implements json.Unmarshaler: a string is one text block, null no blocks.
func (c *Content) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = Content{{Type: "text", Text: s}}
		return nil
	case len(b) > 0 && b[0] == '[':
		return json.Unmarshal(b, (*[]Block)(c))
	case string(b) == "null":
		*c = nil
		return nil
	}
	return errors.New("anthropic: content is neither a string nor a list of blocks")
}

// Marshal encodes v as json.Marshal does, but without HTML escaping ("<" and "&" go as the
// client wrote them, and a body stays readable in logs and tests) and without the encoder's
// newline. Encode a request with it: json.Marshal would escape the content that Content
// encodes itself.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Block is one content block of a request; only the members of its Type are set: text
// (Text, Citations), image and document (Source), tool_use (ID, Name, Input), tool_result
// (ToolUseID, Content, IsError), thinking (Thinking, Signature), redacted_thinking (Data).
// Input is the tool's arguments as a JSON object, raw. CacheControl ({"type":"ephemeral"},
// with a ttl) is raw, passed on as the client wrote it.
type Block struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	Source       *Source         `json:"source,omitempty"`
	Title        string          `json:"title,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      Content         `json:"content,omitempty"`
	IsError      bool            `json:"is_error,omitempty"`
	Thinking     string          `json:"thinking,omitempty"`
	Signature    string          `json:"signature,omitempty"`
	Data         string          `json:"data,omitempty"`
	Citations    json.RawMessage `json:"citations,omitempty"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

// MarshalJSON implements json.Marshaler: a thinking block always has its thinking member,
// even empty (a model asked for display "omitted" writes none, and the API requires the
// member when the block is handed back); every other block leaves out what is not set.
func (b Block) MarshalJSON() ([]byte, error) {
	if b.Type == "thinking" {
		return Marshal(struct {
			Type      string `json:"type"`
			Thinking  string `json:"thinking"`
			Signature string `json:"signature"`
		}{b.Type, b.Thinking, b.Signature})
	}
	type plain Block // without this method
	return Marshal(plain(b))
}

// CacheControl is a cache_control member: {"type":"ephemeral"}, with a ttl of "5m" (the
// default) or "1h". Block.CacheControl and Tool.CacheControl keep it raw, as the client
// wrote it; this is its shape for those who read or write it.
type CacheControl struct {
	Type string `json:"type"`
	TTL  string `json:"ttl,omitempty"`
}

// Source is an image's or a document's source: base64 (MediaType and Data), url (URL), or
// for a document text (MediaType text/plain and Data).
type Source struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// Tool is a tool the model may call. A client tool has a name, a description and the JSON
// schema of its input (raw); a server tool (web_search_..., code_execution_...) has a Type
// as well. CacheControl is raw, as in Block.
type Tool struct {
	Type         string          `json:"type,omitempty"`
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

// ToolChoice is auto, any, tool (with Name) or none; none takes no other member.
type ToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

// Thinking turns extended thinking on (type enabled, with a budget of at least 1024
// tokens, below max_tokens) or off (type disabled).
type Thinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
}

// Metadata is the request's metadata: an opaque id of the end user.
type Metadata struct {
	UserID string `json:"user_id"`
}
