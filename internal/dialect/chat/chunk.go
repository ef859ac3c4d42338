package chat

import (
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// chunkHead is the fixed start of every chunk of one response: the gateway's id, the object
// type, the creation time and the served model, encoded once.
func chunkHead(id string, created int64, model string) []byte {
	b := []byte(`{"id":`)
	b = oai.AppendString(b, id)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = oai.AppendInt(b, int(created))
	b = append(b, `,"model":`...)
	b = oai.AppendString(b, model)
	return append(b, `,"choices":[`...)
}

// appendRole appends the role-only first delta of a choice, as OpenAI sends it: content ""
// for an answer that starts with text, null for one that starts with a tool call or refusal.
func appendRole(b []byte, choice int, null bool) []byte {
	b = append(b, `{"index":`...)
	b = oai.AppendInt(b, choice)
	if null {
		b = append(b, `,"delta":{"role":"assistant","content":null},"logprobs":null,"finish_reason":null}`...)
	} else {
		b = append(b, `,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}`...)
	}
	return b
}

// appendDelta appends one choice with the delta of ev; lp is the logprobs object to attach,
// if any.
func appendDelta(b []byte, ev *llm.Event, lp []byte) []byte {
	b = append(b, `{"index":`...)
	b = oai.AppendInt(b, ev.Choice)
	b = append(b, `,"delta":{`...)
	comma := false
	field := func(name string) {
		if comma {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
		comma = true
	}
	switch ev.Type {
	case llm.EvText:
		field("content")
		b = oai.AppendString(b, ev.Text)
	case llm.EvRefusal:
		field("refusal")
		b = oai.AppendString(b, ev.Text)
	case llm.EvReasoning:
		f := ev.Field
		if f == "" {
			f = "reasoning_content"
		}
		field(f)
		b = oai.AppendString(b, ev.Text)
	case llm.EvToolCall:
		field("tool_calls")
		b = append(b, `[{"index":`...)
		b = oai.AppendInt(b, ev.Tool.Index)
		b = append(b, `,"id":`...)
		b = oai.AppendString(b, ev.Tool.ID)
		b = append(b, `,"type":"function","function":{"name":`...)
		b = oai.AppendString(b, ev.Tool.Name)
		b = append(b, `,"arguments":`...)
		b = oai.AppendString(b, ev.Tool.Args)
		b = append(b, `}}]`...)
	}
	b = append(b, `},"logprobs":`...)
	if lp != nil {
		b = append(b, lp...)
	} else {
		b = append(b, `null`...)
	}
	b = append(b, `,"finish_reason":`...)
	if ev.Type == llm.EvDone {
		b = oai.AppendString(b, ev.Finish)
	} else {
		b = append(b, `null`...)
	}
	return append(b, '}')
}

// appendUsage appends the usage object in the Chat Completions shape.
func appendUsage(b []byte, u *llm.Usage) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = oai.AppendInt(b, u.PromptTokens)
	b = append(b, `,"completion_tokens":`...)
	b = oai.AppendInt(b, u.CompletionTokens)
	b = append(b, `,"total_tokens":`...)
	b = oai.AppendInt(b, u.TotalTokens)
	b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
	b = oai.AppendInt(b, u.CachedTokens)
	b = append(b, `},"completion_tokens_details":{"reasoning_tokens":`...)
	b = oai.AppendInt(b, u.ReasoningTokens)
	return append(b, `}}`...)
}
