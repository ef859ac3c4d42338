package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
	wire "github.com/sluice-gw/sluice/internal/schema/anthropic"
)

// Request is a decoded POST /v1/messages body: the model asked for and the provider-neutral
// request, whose Native carries the body as the client wrote it for Anthropic targets.
type Request struct {
	Model string
	Req   llm.Request
}

// Headers are the client's request headers an Anthropic upstream must see as they came.
var Headers = []string{"Anthropic-Version", "Anthropic-Beta"}

// Decode parses and validates a Messages body. What Anthropic requires (model, max_tokens,
// messages) is required here too, with its messages; members the gateway does not model are
// accepted, kept in the native body for Anthropic targets and dropped for the others.
// header gets the client's header values by canonical name (http.Header.Get).
func Decode(body []byte, header func(string) string) (*Request, error) {
	return decode(body, header, false)
}

// DecodeCount parses and validates a count_tokens body: a Messages body without max_tokens
// and stream.
func DecodeCount(body []byte, header func(string) string) (*Request, error) {
	return decode(body, header, true)
}

func decode(body []byte, header func(string) string, count bool) (*Request, error) {
	r := &Request{}
	var d decoder
	hasMax := false
	err := oai.Scan(body, func(key string, raw json.RawMessage) error {
		if oai.IsNull(raw) && key != "model" && key != "max_tokens" && key != "messages" {
			return nil
		}
		if key == "max_tokens" {
			hasMax = true
		}
		return d.field(r, key, raw)
	})
	if err != nil {
		return nil, err
	}
	switch {
	case r.Model == "":
		return nil, invalid("model", "model: Field required")
	case !hasMax && !count:
		return nil, invalid("max_tokens", "max_tokens: Field required")
	case d.messages == nil:
		return nil, invalid("messages", "messages: Field required")
	}
	if count {
		big := 1 << 30 // thinking's budget is checked against max_tokens, which counting has not
		r.Req.MaxTokens = &big
	}
	if err := d.finish(r); err != nil {
		return nil, err
	}
	n := &llm.Native{Wire: "anthropic", Body: body, Only: d.only}
	for _, h := range Headers {
		if v := header(h); v != "" {
			if n.Header == nil {
				n.Header = map[string]string{}
			}
			n.Header[h] = v
		}
	}
	r.Req.Native = n
	return r, nil
}

// invalid is a 400 invalid_request_error in Anthropic's words ("field: what is wrong").
func invalid(param, format string, args ...any) *llm.Error {
	return &llm.Error{Kind: llm.Invalid, Type: "invalid_request_error", Param: param, Message: fmt.Sprintf(format, args...)}
}

// decoder is the state of one Decode: the members that are translated once all are read.
type decoder struct {
	system   json.RawMessage
	messages json.RawMessage
	tools    json.RawMessage
	choice   *wire.ToolChoice
	thinking *wire.Thinking
	only     []string
}

// needs records what only an Anthropic target can carry.
func (d *decoder) needs(what string) {
	if !slices.Contains(d.only, what) {
		d.only = append(d.only, what)
	}
}

func (d *decoder) field(r *Request, key string, raw json.RawMessage) error {
	q := &r.Req
	var err error
	switch key {
	case "model":
		if json.Unmarshal(raw, &r.Model) != nil {
			return invalid(key, "model: Input should be a valid string")
		}
	case "max_tokens":
		var n *int
		if n, err = oai.Int(key, raw, 1, 1<<30); err != nil || n == nil {
			return invalid(key, "max_tokens: Input should be an integer of at least 1")
		}
		q.MaxTokens = n
	case "messages":
		d.messages = raw
	case "system":
		d.system = raw
	case "tools":
		d.tools = raw
	case "tool_choice":
		d.choice = &wire.ToolChoice{}
		if json.Unmarshal(raw, d.choice) != nil {
			return invalid(key, "tool_choice: Input should be an object with a type")
		}
	case "thinking":
		d.thinking = &wire.Thinking{}
		if json.Unmarshal(raw, d.thinking) != nil {
			return invalid(key, "thinking: Input should be an object with a type")
		}
	case "stop_sequences":
		if json.Unmarshal(raw, &q.Stop) != nil {
			return invalid(key, "stop_sequences: Input should be a list of strings")
		}
	case "temperature":
		if q.Temperature, err = oai.Float(key, raw, 0, 1); err != nil {
			return invalid(key, "temperature: Input should be a number between 0 and 1")
		}
	case "top_p":
		if q.TopP, err = oai.Float(key, raw, 0, 1); err != nil {
			return invalid(key, "top_p: Input should be a number between 0 and 1")
		}
	case "top_k":
		// Anthropic's own: the native body carries it; OpenAI has no equivalent.
		if _, err = oai.Int(key, raw, 0, 1<<30); err != nil {
			return invalid(key, "top_k: Input should be a non-negative integer")
		}
	case "metadata":
		var m wire.Metadata
		if json.Unmarshal(raw, &m) != nil {
			return invalid(key, "metadata: Input should be an object; metadata.user_id a string")
		}
		// The end user's id names the conversation too: Claude Code writes its session id
		// there, which affinity and an OpenAI target's prompt_cache_key key on.
		q.User, q.Session = m.UserID, m.UserID
	case "stream":
		if json.Unmarshal(raw, &q.Stream) != nil {
			return invalid(key, "stream: Input should be a valid boolean")
		}
	}
	// service_tier, container, mcp_servers and members added to the API later pass to
	// Anthropic targets in the native body; other targets have no use for them.
	return nil
}

// finish translates what needs every member: the conversation, the tools and the choice,
// and the thinking configuration, which is checked against max_tokens.
func (d *decoder) finish(r *Request) error {
	q := &r.Req
	if len(d.system) > 0 {
		sys, err := content(d.system, "system")
		if err != nil {
			return err
		}
		m, err := system(sys, "system", d.system[0] == '"')
		if err != nil {
			return err
		}
		if len(m.Parts) > 0 {
			q.Messages = append(q.Messages, m)
		}
	}
	turns, err := oai.Elements(d.messages)
	if err != nil {
		return invalid("messages", "messages: Input should be a valid list")
	}
	if len(turns) == 0 {
		return invalid("messages", "messages: at least one message is required")
	}
	for i, raw := range turns {
		var t struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw, &t) != nil {
			return invalid("messages", "messages.%d: Input should be an object with a role and content", i)
		}
		msgs, err := d.turn(t.Role, t.Content, i)
		if err != nil {
			return err
		}
		q.Messages = append(q.Messages, msgs...)
	}
	if err := d.decodeTools(q); err != nil {
		return err
	}
	if err := d.toolChoice(q); err != nil {
		return err
	}
	if t := d.thinking; t != nil {
		switch t.Type {
		case "enabled":
			if t.BudgetTokens < 1024 {
				return invalid("thinking", "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
			}
			if t.BudgetTokens >= *q.MaxTokens {
				return invalid("thinking", "`max_tokens` must be greater than `thinking.budget_tokens`")
			}
			q.ThinkingBudget = &t.BudgetTokens // a Gemini target's thinkingBudget
		case "adaptive", "disabled":
		default:
			return invalid("thinking", "thinking.type: Input should be 'enabled', 'adaptive' or 'disabled'")
		}
	}
	return nil
}

// system is a system prompt of text blocks (the system member, or a system message at param)
// as a system message; plain: it came as a string.
func system(blocks []block, param string, plain bool) (llm.Message, error) {
	m := llm.Message{Role: llm.RoleSystem, Plain: plain}
	for i, b := range blocks {
		if b.Type != "text" {
			return m, invalid(param, "%s.%d.type: Input should be 'text'", param, i)
		}
		m.Parts = append(m.Parts, llm.Part{Type: llm.PartText, Text: b.Text, Cache: b.cache})
	}
	return m, nil
}

// block is a content block as the dialect reads it: the members of the known types, and the
// raw block for the others; cache is its cache_control, checked.
type block struct {
	wire.Block
	raw   json.RawMessage
	cache *llm.Cache
}

// cacheOf is the breakpoint of a block or tool at param whose cache_control is raw: nil when
// there is none. Anthropic takes type ephemeral with a ttl of 5m or 1h, or none (5m), and
// refuses anything else with a 400; so does the gateway, whatever the target, rather than
// pass on a marker no Claude target would take.
func cacheOf(raw json.RawMessage, param string) (*llm.Cache, error) {
	if len(raw) == 0 || oai.IsNull(raw) {
		return nil, nil
	}
	var c wire.CacheControl
	if json.Unmarshal(raw, &c) != nil || c.Type != "ephemeral" {
		return nil, invalid(param, "%s.cache_control: Input should be an object with type 'ephemeral'", param)
	}
	switch c.TTL {
	case "", "5m", "1h":
		return &llm.Cache{TTL: c.TTL}, nil
	}
	return nil, invalid(param, "%s.cache_control.ephemeral.ttl: Input should be '5m' or '1h'", param)
}

// content decodes a string or a list of blocks (a message's content, the system prompt, a
// tool_result's content). A block of a type the gateway does not know keeps only its type.
func content(raw json.RawMessage, param string) ([]block, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, invalid(param, "%s: Input should be a valid string", param)
		}
		return []block{{Block: wire.Block{Type: "text", Text: s}}}, nil
	}
	list, err := oai.Elements(raw)
	if err != nil {
		return nil, invalid(param, "%s: Input should be a valid string or a list of content blocks", param)
	}
	out := make([]block, 0, len(list))
	for i, b := range list {
		var head struct {
			Type         string          `json:"type"`
			CacheControl json.RawMessage `json:"cache_control"`
		}
		if json.Unmarshal(b, &head) != nil || head.Type == "" {
			return nil, invalid(param, "%s.%d: Input should be an object with a type", param, i)
		}
		bl := block{raw: b, Block: wire.Block{Type: head.Type}}
		if len(head.CacheControl) > 0 {
			c, err := cacheOf(head.CacheControl, fmt.Sprintf("%s.%d", param, i))
			if err != nil {
				return nil, err
			}
			bl.cache = c
		}
		switch head.Type {
		case "text", "image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking":
			var full struct {
				wire.Block
				Content json.RawMessage `json:"content"`
			}
			if err := json.Unmarshal(b, &full); err != nil {
				return nil, invalid(param, "%s.%d: %s", param, i, oai.JSONMsg(err))
			}
			bl.Block = full.Block
			bl.Block.Content = nil
			bl.raw = full.Content // a tool_result's content, decoded by its reader
		}
		out = append(out, bl)
	}
	return out, nil
}

// turn translates one message into llm messages: a user turn's tool_result blocks become
// tool messages, ahead of the rest of the turn, as a Chat conversation has them.
func (d *decoder) turn(role string, raw json.RawMessage, i int) ([]llm.Message, error) {
	param := fmt.Sprintf("messages.%d.content", i)
	if len(raw) == 0 || oai.IsNull(raw) {
		return nil, invalid(param, "%s: Field required", param)
	}
	blocks, err := content(raw, param)
	if err != nil {
		return nil, err
	}
	switch role {
	case "user":
		return d.user(blocks, param, raw[0] == '"')
	case "assistant":
		m, err := d.assistant(blocks, param)
		return []llm.Message{m}, err
	case "system":
		// Claude Code 2.1.328 puts system messages inside messages (issue 35), which the API
		// takes: an Anthropic target gets the body as it came (Native), and the others a
		// system message in its place, which each adapter carries its own way.
		m, err := system(blocks, param, raw[0] == '"')
		if err != nil || len(m.Parts) == 0 {
			return nil, err
		}
		return []llm.Message{m}, nil
	}
	return nil, invalid(fmt.Sprintf("messages.%d.role", i), "messages.%d.role: Input should be 'user' or 'assistant'", i)
}

func (d *decoder) user(blocks []block, param string, plain bool) ([]llm.Message, error) {
	var out []llm.Message
	m := llm.Message{Role: llm.RoleUser, Plain: plain}
	for j, b := range blocks {
		at := fmt.Sprintf("%s.%d", param, j)
		switch b.Type {
		case "tool_result":
			if b.ToolUseID == "" {
				return nil, invalid(at, "%s.tool_use_id: Field required", at)
			}
			t := llm.Message{Role: llm.RoleTool, ToolCallID: b.ToolUseID, Cache: b.cache}
			if len(b.raw) > 0 && !oai.IsNull(b.raw) {
				inner, err := content(b.raw, at+".content")
				if err != nil {
					return nil, err
				}
				t.Plain = b.raw[0] == '"'
				for _, c := range inner {
					p, err := d.part(c, at+".content")
					if err != nil {
						return nil, err
					}
					switch p.Type {
					case llm.PartImage:
						d.needs("images in tool_result")
						continue
					case llm.PartFile:
						d.needs("documents in tool_result")
						continue
					}
					t.Parts = append(t.Parts, p)
				}
			}
			// is_error has no Chat equivalent: the result's text says what failed.
			out = append(out, t)
		default:
			p, err := d.part(b, at)
			if err != nil {
				return nil, err
			}
			m.Parts = append(m.Parts, p)
		}
	}
	if len(m.Parts) > 0 {
		out = append(out, m)
	}
	return out, nil
}

// part translates a block of user content with its breakpoint (see partOf); an empty part,
// which no adapter sends, has none.
func (d *decoder) part(b block, at string) (llm.Part, error) {
	p, err := d.partOf(b, at)
	if p.Type != llm.PartText || p.Text != "" {
		p.Cache = b.cache
	}
	return p, err
}

// partOf translates a block of user content: text, an image (base64 as a data: URL, or url),
// a plain-text document as text, a base64 or url document as a file (its title the file's
// name). Anything else only Anthropic can read.
func (d *decoder) partOf(b block, at string) (llm.Part, error) {
	switch b.Type {
	case "text":
		return llm.Part{Type: llm.PartText, Text: b.Text}, nil
	case "image":
		s := b.Source
		switch {
		case s != nil && s.Type == "base64" && s.MediaType != "" && s.Data != "":
			return llm.Part{Type: llm.PartImage, URL: "data:" + s.MediaType + ";base64," + s.Data}, nil
		case s != nil && s.Type == "url" && s.URL != "":
			return llm.Part{Type: llm.PartImage, URL: s.URL}, nil
		}
		return llm.Part{}, invalid(at, "%s.source: an image needs a base64 source (media_type, data) or a url source", at)
	case "document":
		s := b.Source
		switch {
		case s != nil && s.Type == "text":
			return llm.Part{Type: llm.PartText, Text: s.Data}, nil
		case s != nil && s.Type == "base64":
			if s.MediaType == "" || !oai.ValidBase64(s.Data) {
				return llm.Part{}, invalid(at, "%s.source: a base64 document needs a media_type and base64 data", at)
			}
			return llm.Part{Type: llm.PartFile, Data: s.Data, MediaType: strings.ToLower(s.MediaType), Filename: b.Title}, nil
		case s != nil && s.Type == "url":
			if s.URL == "" {
				return llm.Part{}, invalid(at, "%s.source.url: Field required", at)
			}
			// A url document is a PDF (Anthropic's URL PDF support).
			return llm.Part{Type: llm.PartFile, URL: s.URL, MediaType: "application/pdf", Filename: b.Title}, nil
		}
		d.needs("document blocks") // a Files API file, custom content: Anthropic's own
	case "thinking", "redacted_thinking", "tool_use":
		return llm.Part{}, invalid(at, "%s.type: a %s block belongs to an assistant message", at, b.Type)
	default:
		d.needs(b.Type + " blocks")
	}
	return llm.Part{Type: llm.PartText}, nil // an empty text part: the adapters leave it out
}

func (d *decoder) assistant(blocks []block, param string) (llm.Message, error) {
	m := llm.Message{Role: llm.RoleAssistant}
	for j, b := range blocks {
		at := fmt.Sprintf("%s.%d", param, j)
		switch b.Type {
		case "text":
			m.Parts = append(m.Parts, llm.Part{Type: llm.PartText, Text: b.Text, Cache: b.cache})
		case "tool_use":
			if b.ID == "" || b.Name == "" {
				return m, invalid(at, "%s: a tool_use block needs an id and a name", at)
			}
			args := "{}"
			if len(b.Input) > 0 {
				var c bytes.Buffer
				if json.Compact(&c, b.Input) != nil || c.Bytes()[0] != '{' {
					return m, invalid(at, "%s.input: Input should be an object", at)
				}
				args = c.String()
			}
			m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: args, Cache: b.cache})
		case "thinking":
			// The signature is Anthropic's (or Bedrock's or Vertex's for a Claude model: the
			// same, Anthropic's thinking-encryption docs say): only a Claude target reads it.
			m.Reasoning = append(m.Reasoning, llm.Reasoning{Text: b.Thinking, Encrypted: b.Signature, Wire: "anthropic"})
		case "redacted_thinking":
			m.Reasoning = append(m.Reasoning, llm.Reasoning{Encrypted: b.Data, Redacted: true, Wire: "anthropic"})
		default:
			// server_tool_use, web_search_tool_result, ...: the record of a server tool,
			// which only Anthropic runs.
			d.needs(b.Type + " blocks")
		}
	}
	return m, nil
}

// decodeTools translates custom tools into functions; server tools (a type other than
// custom: web_search_20250305, bash_20250124, text_editor_...) run at Anthropic only.
func (d *decoder) decodeTools(q *llm.Request) error {
	if len(d.tools) == 0 {
		return nil
	}
	var tools []struct {
		wire.Tool
		Strict *bool `json:"strict"`
	}
	if json.Unmarshal(d.tools, &tools) != nil {
		return invalid("tools", "tools: Input should be a list of tools")
	}
	for i, t := range tools {
		if t.Name == "" {
			return invalid("tools", "tools.%d.name: Field required", i)
		}
		cache, err := cacheOf(t.CacheControl, fmt.Sprintf("tools.%d", i))
		if err != nil {
			return err
		}
		if t.Type != "" && t.Type != "custom" {
			d.needs("server tool " + t.Type)
			continue
		}
		if len(t.InputSchema) == 0 {
			return invalid("tools", "tools.%d.input_schema: Field required", i)
		}
		var c bytes.Buffer
		if json.Compact(&c, t.InputSchema) != nil || c.Bytes()[0] != '{' {
			return invalid("tools", "tools.%d.input_schema: Input should be an object", i)
		}
		q.Tools = append(q.Tools, llm.Tool{Name: t.Name, Description: t.Description, Parameters: c.Bytes(), Strict: t.Strict, Cache: cache})
	}
	return nil
}

// toolChoice translates tool_choice into Chat's (auto, required, none, a named function)
// and disable_parallel_tool_use into parallel_tool_calls: false.
func (d *decoder) toolChoice(q *llm.Request) error {
	c := d.choice
	if c == nil {
		return nil
	}
	switch c.Type {
	case "auto":
		q.ToolChoice = json.RawMessage(`"auto"`)
	case "any":
		q.ToolChoice = json.RawMessage(`"required"`)
	case "none":
		q.ToolChoice = json.RawMessage(`"none"`)
	case "tool":
		if c.Name == "" {
			return invalid("tool_choice", "tool_choice.tool.name: Field required")
		}
		b, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": c.Name}})
		q.ToolChoice = b
	default:
		return invalid("tool_choice", "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
	}
	if c.DisableParallelToolUse {
		q.Extra = append(q.Extra, llm.Field{Name: "parallel_tool_calls", Value: json.RawMessage(`false`)})
	}
	return nil
}

// Estimate is the input tokens of a Messages body by the gateway's rule of thumb, about four
// bytes a token of its text, tool definitions included: what count_tokens answers when no
// Anthropic target can count.
func Estimate(r *Request) int {
	n := 0
	for _, m := range r.Req.Messages {
		n += 4 // the turn's framing
		for _, p := range m.Parts {
			n += len(p.Text) / 4
			if p.Type == llm.PartImage {
				n += 1600 // Anthropic's cost of a ~1.15 megapixel image
			}
		}
		for _, c := range m.ToolCalls {
			n += (len(c.Name) + len(c.Arguments)) / 4
		}
		for _, x := range m.Reasoning {
			n += len(x.Text) / 4
		}
	}
	for _, t := range r.Req.Tools {
		n += (len(t.Name) + len(t.Description) + len(t.Parameters)) / 4
	}
	return max(n, 1)
}
