package mockllm

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/sluice-gw/sluice/internal/schema/anthropic"
)

// anthropicDialect speaks Anthropic Messages: POST .../v1/messages, streamed as the API does
// (testdata/anthropic-*.sse): message_start; per content block content_block_start, its
// deltas and content_block_stop, with a ping after the first block's start; message_delta
// with the stop reason and cumulative usage; message_stop.
type anthropicDialect struct{}

type anthropicRequest struct {
	Model    string          `json:"model"`
	System   json.RawMessage `json:"system"` // a string or text blocks
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"` // a string or content blocks
	} `json:"messages"`
	MaxTokens *int `json:"max_tokens"`
	Stream    bool `json:"stream"`
}

// parse checks what the API checks first: the credentials and the version header, then the
// required fields (max_tokens has no default on the API, so an adapter must send one).
func (anthropicDialect) parse(h http.Header, raw []byte) (*request, *reqError) {
	invalid := func(msg string) *reqError {
		return &reqError{http.StatusBadRequest, newAPIError("invalid_request_error", "", msg)}
	}
	if h.Get("X-Api-Key") == "" && h.Get("Authorization") == "" {
		return nil, &reqError{http.StatusUnauthorized, newAPIError("authentication_error", "",
			"x-api-key header is required")}
	}
	if h.Get("Anthropic-Version") == "" {
		return nil, invalid("anthropic-version: header is required")
	}
	var req anthropicRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, badJSON(err)
	}
	switch {
	case req.Model == "":
		return nil, invalid("model: Field required")
	case req.Messages == nil:
		return nil, invalid("messages: Field required")
	case req.MaxTokens == nil:
		return nil, invalid("max_tokens: Field required")
	}
	r := &request{model: req.Model, stream: req.Stream, single: true}
	r.promptBytes = len(text(req.System, "text"))
	for _, m := range req.Messages {
		t := text(m.Content, "text")
		r.promptBytes += len(t)
		if m.Role == "user" {
			r.user = t
		}
		r.afterTool, r.toolText = anthropicToolResult(m.Role, m.Content)
	}
	return r, nil
}

func (anthropicDialect) serves(sc *script) error { return notEmbeddings(sc) }

func (anthropicDialect) last() []byte { return nil }

// anthropicError is the body of every Anthropic error, in a response or an error event.
type anthropicError = anthropic.ErrorResponse

func newAnthropicError(typ, msg string) anthropicError {
	e := anthropicError{Type: "error"}
	e.Error.Type, e.Error.Message = typ, msg
	return e
}

// anthropicStatus is the error type and message the API answers with status
// (https://docs.claude.com/en/api/errors).
func anthropicStatus(status int) (typ, msg string) {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error", "invalid x-api-key"
	case http.StatusForbidden:
		return "permission_error", "Your API key does not have permission to use the specified resource."
	case http.StatusNotFound:
		return "not_found_error", "The requested resource could not be found."
	case http.StatusRequestEntityTooLarge:
		return "request_too_large", "Request exceeds the maximum allowed number of bytes."
	case http.StatusTooManyRequests:
		return "rate_limit_error", "This request would exceed the rate limit for your organization. (mockllm)"
	case http.StatusGatewayTimeout:
		return "timeout_error", "Request timed out."
	case 529:
		return "overloaded_error", "Overloaded"
	}
	if status >= 500 {
		return "api_error", "Internal server error"
	}
	return "invalid_request_error", "mockllm: scripted error"
}

func (anthropicDialect) errorBody(status int, e apiError) any {
	typ, _ := anthropicStatus(status)
	return newAnthropicError(typ, e.Error.Message)
}

// scripted answers fail=STATUS in Anthropic's shape; a non-streamed fail=error or event is
// the 529 overloaded_error its stream would have carried.
func (anthropicDialect) scripted(sc *script, model string) (int, any) {
	status := sc.faultStatus(529)
	typ, msg := anthropicStatus(status)
	if status == http.StatusNotFound {
		msg = "model: " + model
	}
	return status, newAnthropicError(or(sc.typ, typ), or(sc.msg, msg))
}

// inband is an error event after which the stream ends: the API's overloaded_error after
// message_start (testdata/anthropic-instream-overloaded-error.sse), or rate_limit_error for
// fail=ratelimit.
func (anthropicDialect) inband(_ *answer, sc *script, _ int) [][]byte {
	typ, msg := "overloaded_error", "Overloaded"
	if sc.fail == "ratelimit" {
		typ, msg = anthropicStatus(http.StatusTooManyRequests)
	}
	return [][]byte{eventFrame("error", newAnthropicError(or(sc.typ, typ), or(sc.msg, msg)))}
}

// block is one content block of an Anthropic answer.
type block struct {
	kind     string   // thinking, text or tool_use
	deltas   []string // thinking, text or partial JSON
	whole    string
	id, name string // tool_use
}

// blocks are the content blocks of the answer's choice: thinking, text, then tool calls.
func anthropicBlocks(a *answer) []block {
	ch := a.choices[0]
	var out []block
	if len(ch.reasoning) > 0 {
		out = append(out, block{kind: "thinking", deltas: ch.reasoning, whole: strings.Join(ch.reasoning, "")})
	}
	if len(ch.content) > 0 {
		out = append(out, block{kind: "text", deltas: ch.content, whole: strings.Join(ch.content, "")})
	}
	for i, cl := range ch.calls {
		out = append(out, block{kind: "tool_use", deltas: cl.frags, whole: cl.args,
			id: fmt.Sprintf("toolu_mock_%d_%d", a.seq, i), name: cl.name})
	}
	return out
}

// signature is a thinking block's made-up signature, deterministic for its text.
func signature(thinking string) string {
	sum := sha256.Sum256([]byte("mockllm:" + thinking))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// stopReason maps the script's finish to Anthropic's stop_reason: a refusal is "refusal",
// and other values pass through (finish=stop_sequence, finish=pause_turn).
func stopReason(a *answer) string {
	switch f := a.choices[0].finish; {
	case a.sc.refuse && a.sc.finish == "" || f == "content_filter":
		return "refusal"
	case f == "stop":
		return "end_turn"
	case f == "length":
		return "max_tokens"
	case f == "tool_calls":
		return "tool_use"
	default:
		return f
	}
}

func (anthropicDialect) frames(a *answer) (pre, body [][]byte) {
	start := a.message()
	start.Content, start.StopReason, start.Usage.OutputTokens = []any{}, nil, 1
	pre = [][]byte{eventFrame("message_start", anthropic.MessageStartEvent{Type: "message_start", Message: start})}
	ping := eventFrame("ping", anthropic.TypeEvent{Type: "ping"})
	delta := func(i int, d any) []byte {
		return eventFrame("content_block_delta", anthropic.ContentBlockDeltaEvent{Type: "content_block_delta", Index: i, Delta: d})
	}
	blocks := anthropicBlocks(a)
	for i, b := range blocks {
		var first any
		switch b.kind {
		case "thinking":
			first = anthropic.ThinkingBlock{Type: "thinking"}
		case "text":
			first = anthropic.TextBlock{Type: "text"}
		case "tool_use":
			first = anthropic.ToolUseBlock{Type: "tool_use", ID: b.id, Name: b.name, Input: json.RawMessage("{}")}
		}
		body = append(body, eventFrame("content_block_start", anthropic.ContentBlockStartEvent{Type: "content_block_start", Index: i, ContentBlock: first}))
		if i == 0 {
			body = append(body, ping)
		}
		if b.kind == "tool_use" {
			// The API's first input_json_delta of a tool call is always empty.
			body = append(body, delta(i, anthropic.InputJSONDelta{Type: "input_json_delta"}))
		}
		for _, d := range b.deltas {
			switch b.kind {
			case "thinking":
				body = append(body, delta(i, anthropic.ThinkingDelta{Type: "thinking_delta", Thinking: d}))
			case "text":
				body = append(body, delta(i, anthropic.TextDelta{Type: "text_delta", Text: d}))
			case "tool_use":
				body = append(body, delta(i, anthropic.InputJSONDelta{Type: "input_json_delta", PartialJSON: d}))
			}
		}
		if b.kind == "thinking" {
			body = append(body, delta(i, anthropic.SignatureDelta{Type: "signature_delta", Signature: signature(b.whole)}))
		}
		body = append(body, eventFrame("content_block_stop", anthropic.ContentBlockStopEvent{Type: "content_block_stop", Index: i}))
	}
	if len(blocks) == 0 {
		body = append(body, ping)
	}
	if a.sc.end == "nofinish" {
		return pre, body
	}
	md := anthropic.MessageDeltaEvent{Type: "message_delta", Usage: a.message().Usage.Delta()}
	md.Delta.StopReason = stopReason(a)
	body = append(body, eventFrame("message_delta", md))
	if a.sc.end == "done" {
		body = append(body, eventFrame("message_stop", anthropic.TypeEvent{Type: "message_stop"}))
	}
	return pre, body
}

// message is the answer as a Message object, its content whole.
func (a *answer) message() anthropic.Message {
	reason := stopReason(a)
	m := anthropic.Message{ID: fmt.Sprintf("msg_mock_%d", a.seq), Type: "message", Role: "assistant",
		Model: a.model, Content: []any{}, StopReason: &reason}
	m.Usage.InputTokens, m.Usage.OutputTokens = a.usage.PromptTokens, a.usage.CompletionTokens
	for _, b := range anthropicBlocks(a) {
		switch b.kind {
		case "thinking":
			m.Content = append(m.Content, anthropic.ThinkingBlock{Type: "thinking", Thinking: b.whole, Signature: signature(b.whole)})
		case "text":
			m.Content = append(m.Content, anthropic.TextBlock{Type: "text", Text: b.whole})
		case "tool_use":
			if json.Valid([]byte(b.whole)) { // arguments cut by max= have no object to give
				m.Content = append(m.Content, anthropic.ToolUseBlock{Type: "tool_use", ID: b.id, Name: b.name, Input: json.RawMessage(b.whole)})
			}
		}
	}
	return m
}

func (anthropicDialect) whole(a *answer) any { return a.message() }

// countTokens answers Anthropic's count_tokens: the prompt's tokens as the answers' usage
// counts them, after the checks of parse (max_tokens aside: count_tokens takes none, and
// refuses it, as it refuses stream). The body is the model's last request.
func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		writeJSON(w, http.StatusBadRequest, newAnthropicError("invalid_request_error", "the body is not a JSON object"))
		return
	}
	if m["max_tokens"] != nil || m["stream"] != nil {
		writeJSON(w, http.StatusBadRequest, newAnthropicError("invalid_request_error", "max_tokens, stream: Extra inputs are not permitted"))
		return
	}
	m["max_tokens"] = json.RawMessage("1") // what parse requires of a Messages request
	withMax, _ := json.Marshal(m)
	req, rerr := anthropicDialect{}.parse(r.Header, withMax)
	if rerr != nil {
		writeJSON(w, rerr.status, anthropicDialect{}.errorBody(rerr.status, rerr.err))
		return
	}
	s.mu.Lock()
	s.last[req.model] = raw
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]int{"input_tokens": tokens(req.promptBytes)})
}
