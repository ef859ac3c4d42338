package anthropic

import (
	"bytes"
	"encoding/json"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
	wire "github.com/sluice-gw/sluice/internal/schema/anthropic"
)

// parseEvent reads the fields of one raw event as r3labs returns it (the bytes before its
// blank line), following the WHATWG event-stream rules: CRLF, LF or CR line ends, ":"
// comments, "data" lines joined by LF, one optional space after the colon. r3labs only
// frames; its own Event type is filled by its client, which is not used here.
func parseEvent(raw []byte) (typ string, data []byte) {
	raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf")) // a BOM may open the stream
	hasData := false
	for len(raw) > 0 {
		i := bytes.IndexAny(raw, "\r\n")
		line := raw
		if i >= 0 {
			line = raw[:i]
			if raw[i] == '\r' && i+1 < len(raw) && raw[i+1] == '\n' {
				i++
			}
			raw = raw[i+1:]
		} else {
			raw = nil
		}
		if len(line) == 0 || line[0] == ':' {
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "event":
			typ = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		}
	}
	return typ, data
}

// wireEvent is the adapter's view of any event of the Messages stream (the typed events of
// package schema/anthropic): only the members it reads, of every event type at once, since
// the type is known only once the event is decoded; only those of its type are set. It
// declares its blocks and deltas itself, with the members it reads and nothing else, so that
// a block it does not know (a server tool's result, whose content is no wire.Content) never
// fails the decode. https://docs.anthropic.com/en/docs/build-with-claude/streaming
type wireEvent struct {
	Type         string           `json:"type"`
	Index        int              `json:"index"`
	Message      *wireHead        `json:"message"`
	ContentBlock *wireBlock       `json:"content_block"`
	Delta        *wireDelta       `json:"delta"`
	Usage        *wire.DeltaUsage `json:"usage"`
}

// wireDelta is the delta of content_block_delta and message_delta.
type wireDelta struct {
	Type         string `json:"type"`
	Text         string `json:"text"`
	PartialJSON  string `json:"partial_json"`
	Thinking     string `json:"thinking"`
	Signature    string `json:"signature"`
	StopReason   string `json:"stop_reason"`
	StopSequence string `json:"stop_sequence"`
}

// wireHead is what the adapter reads of message_start's message.
type wireHead struct {
	ID    string           `json:"id"`
	Model string           `json:"model"`
	Usage *wire.DeltaUsage `json:"usage"`
}

// wireBlock is the decoder's view of a wire.Content block: what content_block_start carries,
// and each block of a non-streamed message.
type wireBlock struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
}

// reasoningField is the Chat Completions field thinking goes out in: reasoning_content, as
// DeepSeek and LiteLLM's Anthropic translation name it, and the server's default.
const reasoningField = "reasoning_content"

// blockState is what the stream keeps of one wire.Content block.
type blockState struct {
	kind  string // content_block.type
	tool  int    // index of a tool_use among the message's tool calls
	input json.RawMessage
	args  bool // an input_json_delta fragment came
}

// message is the state of one streamed Messages answer.
type message struct {
	origin
	started bool
	blocks  map[int]*blockState
	tools   int
	reason  string
	stopSeq string // the stop sequence that matched
	stopped bool   // message_stop came

	// usage as last reported; usage is set once any field came. cacheWrite1h is the 1h part
	// of cacheWrite (usage.cache_creation.ephemeral_1h_input_tokens).
	in, out, cacheRead, cacheWrite, cacheWrite1h int
	usage                                        bool
	// dropped is the request's breakpoints the adapter left out (Usage.CacheDropped).
	dropped int
}

// event queues on q the llm.Events of one wire event (its type from the event: line, its
// data), or returns the error it stands for.
func (m *message) event(q *transport.Queue, typ string, data []byte) error {
	if typ == "error" {
		// {"type":"error","error":{"type":"overloaded_error","message":...}}, or whatever
		// a proxy made of it, even nothing.
		return m.streamError(parseErrorBody(data))
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil // a comment, or an event without data
	}
	var ev wireEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return &llm.Error{Kind: llm.Unavailable, Message: m.name + " sent an event that is not JSON", Err: err}
	}
	if ev.Type == "error" {
		return m.streamError(parseErrorBody(data))
	}
	return m.apply(q, &ev)
}

// apply queues on q the llm.Events of the decoded wire event ev.
func (m *message) apply(q *transport.Queue, ev *wireEvent) error {
	switch ev.Type {
	case "message_start":
		if ev.Message != nil && !m.started {
			m.started = true
			m.addUsage(ev.Message.Usage)
			q.Push(llm.Event{Type: llm.EvStart, ID: ev.Message.ID, Model: ev.Message.Model})
		}
	case "content_block_start":
		if ev.ContentBlock != nil {
			return m.blockStart(q, ev)
		}
	case "content_block_delta":
		if ev.Delta != nil {
			return m.delta(q, ev)
		}
	case "content_block_stop":
		b := m.blocks[ev.Index]
		if b != nil && b.kind == "tool_use" && !b.args {
			// No input_json_delta: a tool without arguments. The start's input ({}) is the
			// whole input, and a Chat client expects "{}" as OpenAI sends it, not "".
			args := "{}"
			if in := compactOr(b.input, "{}"); in[0] == '{' {
				args = string(in)
			}
			q.Push(llm.Event{Type: llm.EvToolCall, Tool: llm.ToolDelta{Index: b.tool, Args: args}})
		}
	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != "" {
			m.reason, m.stopSeq = ev.Delta.StopReason, ev.Delta.StopSequence
		}
		m.addUsage(ev.Usage)
	case "message_stop":
		m.stopped = true
		if m.usage {
			q.Push(llm.Event{Type: llm.EvUsage, Usage: m.total()})
		}
		q.Push(llm.Event{Type: llm.EvDone, Finish: finishReason(m.reason), Stop: m.reason, StopSequence: m.stopSeq})
	}
	// ping, and event types added after this adapter was written, carry nothing for us
	// (Anthropic: "new event types may be added"; handle unknown ones gracefully).
	return nil
}

func (m *message) blockStart(q *transport.Queue, ev *wireEvent) error {
	cb := ev.ContentBlock
	if m.blocks == nil {
		m.blocks = map[int]*blockState{}
	}
	b := &blockState{kind: cb.Type}
	m.blocks[ev.Index] = b
	switch cb.Type {
	case "text":
		if cb.Text != "" {
			q.Push(llm.Event{Type: llm.EvText, Text: cb.Text})
		}
	case "thinking":
		if cb.Thinking != "" {
			q.Push(llm.Event{Type: llm.EvReasoning, Text: cb.Thinking, Field: reasoningField})
		}
		if cb.Signature != "" {
			q.Push(llm.Event{Type: llm.EvReasoning, Encrypted: cb.Signature, Field: reasoningField})
		}
	case "redacted_thinking":
		// Opaque: carried as a signature with no text before it (see the package comment).
		if cb.Data != "" {
			q.Push(llm.Event{Type: llm.EvReasoning, Encrypted: cb.Data, Redacted: true, Field: reasoningField})
		}
	case "tool_use":
		b.tool, b.input = m.tools, cb.Input
		m.tools++
		// The first fragment names the call, as a Chat stream's does, with no arguments yet.
		q.Push(llm.Event{Type: llm.EvToolCall, Tool: llm.ToolDelta{Index: b.tool, ID: cb.ID, Name: cb.Name}})
	}
	// Server tools (server_tool_use, web_search_tool_result, ...) run at Anthropic; a Chat
	// client has no place for them, and the model's text reports what they found.
	return nil
}

func (m *message) delta(q *transport.Queue, ev *wireEvent) error {
	d := ev.Delta
	switch d.Type {
	case "text_delta":
		if d.Text != "" {
			q.Push(llm.Event{Type: llm.EvText, Text: d.Text})
		}
	case "thinking_delta":
		if d.Thinking != "" {
			q.Push(llm.Event{Type: llm.EvReasoning, Text: d.Thinking, Field: reasoningField})
		}
	case "signature_delta":
		if d.Signature != "" {
			q.Push(llm.Event{Type: llm.EvReasoning, Encrypted: d.Signature, Field: reasoningField})
		}
	case "input_json_delta":
		b := m.blocks[ev.Index]
		if b == nil {
			return llm.Errorf(llm.Unavailable, "%s sent tool input for block %d, which never started", m.name, ev.Index)
		}
		if b.kind != "tool_use" || d.PartialJSON == "" {
			return nil // a server tool's input, or the empty first fragment
		}
		b.args = true
		q.Push(llm.Event{Type: llm.EvToolCall, Tool: llm.ToolDelta{Index: b.tool, Args: d.PartialJSON}})
	}
	return nil
}

func (m *message) addUsage(u *wire.DeltaUsage) {
	if u == nil {
		return
	}
	set := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
			m.usage = true
		}
	}
	set(&m.in, u.InputTokens)
	set(&m.out, u.OutputTokens)
	set(&m.cacheRead, u.CacheReadInputTokens)
	set(&m.cacheWrite, u.CacheCreationInputTokens)
	if c := u.CacheCreation; c != nil {
		set(&m.cacheWrite1h, &c.Ephemeral1hInputTokens)
	}
}

// total is the usage in Chat terms. Anthropic's input_tokens leave out the cached ones;
// OpenAI's prompt_tokens include them, with cached_tokens a part of them, so prompt tokens
// are the sum and a price table reads both the same way. Cache writes stay the total
// cache_creation_input_tokens, their 1h part apart.
func (m *message) total() *llm.Usage {
	prompt := m.in + m.cacheRead + m.cacheWrite
	return &llm.Usage{PromptTokens: prompt, CompletionTokens: m.out, TotalTokens: prompt + m.out,
		CachedTokens: m.cacheRead, CacheWriteTokens: m.cacheWrite, CacheWrite1hTokens: min(m.cacheWrite1h, m.cacheWrite),
		CacheDropped: m.dropped}
}

// finishReason maps a stop_reason to a Chat finish_reason.
func finishReason(r string) string {
	switch r {
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		return "tool_calls"
	case "refusal":
		return "content_filter"
	}
	// end_turn, stop_sequence, pause_turn (a server tool loop paused: the turn ends here),
	// none, and reasons added later.
	return "stop"
}
