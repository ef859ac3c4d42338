package bedrock

import (
	"encoding/base64"
	"encoding/json"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
	"github.com/sluice-gw/sluice/internal/schema/bedrock"
)

// reasoningField is the Chat Completions field reasoning goes out in, as for Anthropic.
const reasoningField = "reasoning_content"

// block is what the stream keeps of one content block.
type block struct {
	tool int  // index of a tool use among the message's tool calls; -1 for other blocks
	args bool // an input fragment came
}

// message is the state of one streamed Converse answer.
type message struct {
	origin
	id       string // the request id (x-amzn-requestid): Bedrock gives the answer none
	model    string // the model id called: the stream does not name it
	started  bool
	blocks   map[int]*block
	tools    int
	reason   string
	stopped  bool // messageStop came
	usage    *bedrock.Usage
	finished bool // EvDone queued
	// dropped is the count of the client's cache breakpoints the request left out, which
	// the usage reports (llm.Usage.CacheDropped).
	dropped int
}

// event queues on q the llm.Events of one event frame (its :event-type, its payload), or
// returns the error it stands for.
func (m *message) event(q *transport.Queue, typ string, payload []byte) error {
	if m.finished {
		return nil
	}
	var err error
	switch typ {
	case bedrock.EventMessageStart:
		var ev bedrock.MessageStart
		if err = json.Unmarshal(payload, &ev); err == nil && !m.started {
			m.started = true
			q.Push(llm.Event{Type: llm.EvStart, ID: m.id, Model: m.model})
		}
	case bedrock.EventContentBlockStart:
		var ev bedrock.ContentBlockStart
		if err = json.Unmarshal(payload, &ev); err == nil && ev.Start.ToolUse != nil {
			b := m.block(ev.ContentBlockIndex)
			b.tool = m.tools
			m.tools++
			q.Push(llm.Event{Type: llm.EvToolCall, Tool: llm.ToolDelta{Index: b.tool,
				ID: ev.Start.ToolUse.ToolUseID, Name: ev.Start.ToolUse.Name}})
		}
	case bedrock.EventContentBlockDelta:
		var ev bedrock.ContentBlockDelta
		if err = json.Unmarshal(payload, &ev); err == nil {
			return m.delta(q, &ev)
		}
	case bedrock.EventContentBlockStop:
		var ev bedrock.ContentBlockStop
		if err = json.Unmarshal(payload, &ev); err == nil {
			if b := m.blocks[ev.ContentBlockIndex]; b != nil && b.tool >= 0 && !b.args {
				// A tool without arguments: a Chat client expects "{}", as OpenAI sends it.
				q.Push(llm.Event{Type: llm.EvToolCall, Tool: llm.ToolDelta{Index: b.tool, Args: "{}"}})
			}
		}
	case bedrock.EventMessageStop:
		var ev bedrock.MessageStop
		if err = json.Unmarshal(payload, &ev); err == nil {
			m.reason, m.stopped = ev.StopReason, true
			if m.usage != nil {
				m.finish(q)
			}
		}
	case bedrock.EventMetadata:
		var ev bedrock.Metadata
		if err = json.Unmarshal(payload, &ev); err == nil && ev.Usage != nil {
			m.usage = ev.Usage
			if m.stopped {
				m.finish(q)
			}
		}
	}
	// Event types added later carry nothing for us.
	if err != nil {
		return &llm.Error{Kind: llm.Unavailable, Message: m.name + " sent a " + typ + " event that is not JSON", Err: err}
	}
	return nil
}

func (m *message) block(i int) *block {
	if m.blocks == nil {
		m.blocks = map[int]*block{}
	}
	b := m.blocks[i]
	if b == nil {
		b = &block{tool: -1}
		m.blocks[i] = b
	}
	return b
}

func (m *message) delta(q *transport.Queue, ev *bedrock.ContentBlockDelta) error {
	d := &ev.Delta
	switch {
	case d.Text != nil:
		if *d.Text != "" {
			q.Push(llm.Event{Type: llm.EvText, Text: *d.Text})
		}
	case d.ToolUse != nil:
		b := m.blocks[ev.ContentBlockIndex]
		if b == nil || b.tool < 0 {
			return llm.Errorf(llm.Unavailable, "%s sent tool input for block %d, which is no tool use", m.name, ev.ContentBlockIndex)
		}
		if d.ToolUse.Input != "" {
			b.args = true
			q.Push(llm.Event{Type: llm.EvToolCall, Tool: llm.ToolDelta{Index: b.tool, Args: d.ToolUse.Input}})
		}
	case d.ReasoningContent != nil:
		r := d.ReasoningContent
		if r.Text != "" {
			q.Push(llm.Event{Type: llm.EvReasoning, Text: r.Text, Field: reasoningField})
		}
		if r.Signature != "" {
			// The signature closes the block's reasoning text (the package comment).
			q.Push(llm.Event{Type: llm.EvReasoning, Encrypted: r.Signature, Field: reasoningField})
		}
		if len(r.RedactedContent) > 0 {
			// Redacted reasoning: opaque, with no text before it.
			q.Push(llm.Event{Type: llm.EvReasoning, Field: reasoningField, Redacted: true,
				Encrypted: base64.StdEncoding.EncodeToString(r.RedactedContent)})
		}
	}
	return nil
}

// finish queues the usage, if it came, and the finish.
func (m *message) finish(q *transport.Queue) {
	if m.finished {
		return
	}
	m.finished = true
	if u := m.usage; u != nil {
		prompt := u.InputTokens + u.CacheReadInputTokens + u.CacheWriteInputTokens
		var long int
		for _, d := range u.CacheDetails {
			if d.TTL == "1h" {
				long += d.InputTokens
			}
		}
		q.Push(llm.Event{Type: llm.EvUsage, Usage: &llm.Usage{PromptTokens: prompt, CompletionTokens: u.OutputTokens,
			TotalTokens: prompt + u.OutputTokens, CachedTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheWriteInputTokens,
			CacheWrite1hTokens: min(long, u.CacheWriteInputTokens), CacheDropped: m.dropped}})
	}
	q.Push(llm.Event{Type: llm.EvDone, Finish: finishReason(m.reason)})
}

// finishReason maps a stopReason to a Chat finish_reason.
func finishReason(r string) string {
	switch r {
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		return "tool_calls"
	case "guardrail_intervened", "content_filtered":
		return "content_filter"
	}
	// end_turn, stop_sequence, malformed_model_output, malformed_tool_use, and reasons
	// added later.
	return "stop"
}
