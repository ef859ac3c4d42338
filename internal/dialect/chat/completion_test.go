package chat

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	wire "github.com/sluice-gw/sluice/internal/schema/openai"
)

// reference is the chat.completion body as encoding/json writes wire.ChatCompletion: what
// completion must write byte for byte.
func reference(id string, created int64, model string, resp *llm.Response) []byte {
	out := wire.ChatCompletion{ID: id, Object: "chat.completion", Created: created, Model: model, Choices: []wire.ChatChoice{}}
	for _, ch := range resp.Choices {
		m := wire.AssistantMessage{Role: "assistant"}
		if ch.Text != "" || (ch.Refusal == "" && len(ch.ToolCalls) == 0) {
			t := ch.Text
			m.Content = &t
		}
		if ch.Refusal != "" {
			r := ch.Refusal
			m.Refusal = &r
		}
		if ch.Reasoning != "" {
			r := ch.Reasoning
			if ch.ReasoningField == "reasoning" {
				m.Reasoning = &r
			} else {
				m.ReasoningContent = &r
			}
		}
		for _, tc := range ch.ToolCalls {
			m.ToolCalls = append(m.ToolCalls, wire.ToolCall{ID: tc.ID, Type: "function",
				Function: wire.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
		}
		lp := joinLogprobs(ch.Logprobs)
		if lp == nil {
			lp = json.RawMessage("null")
		}
		out.Choices = append(out.Choices, wire.ChatChoice{Index: ch.Index, Message: m, Logprobs: lp, FinishReason: ch.Finish})
	}
	// prompt_tokens_details is always written, as OpenAI does.
	out.Usage = wire.Usage{PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
		TotalTokens: resp.Usage.TotalTokens, PromptTokensDetails: &wire.PromptTokensDetails{CachedTokens: resp.Usage.CachedTokens},
		CompletionTokensDetails: wire.CompletionTokensDetails{ReasoningTokens: resp.Usage.ReasoningTokens}}
	// No HTML escaping: OpenAI writes "&" and "<" as they are, and so do the streamed chunks.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(out)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// responses are answers of every shape completion writes.
func responses() []*llm.Response {
	u := llm.Usage{PromptTokens: 3, CompletionTokens: 5, TotalTokens: 8, CachedTokens: 1, ReasoningTokens: 2}
	return []*llm.Response{
		{},
		{Choices: []llm.Choice{{Text: "a&b <c> \"q\" \n\t\u2028 é \xff", Finish: "stop"}}, Usage: u},
		{Choices: []llm.Choice{{Refusal: "no", Finish: "stop"}}},
		{Choices: []llm.Choice{{Text: "x", Refusal: "no", Finish: "stop"}}},
		{Choices: []llm.Choice{{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "f", Arguments: `{"a":1}`}, {ID: "c2", Name: "g", Arguments: ""}}, Finish: "tool_calls"}}},
		{Choices: []llm.Choice{{Text: "t", Reasoning: "r", ReasoningField: "reasoning", Finish: "length"}, {Index: 1, Text: "u", Reasoning: "s", Finish: "stop"}}},
		{Choices: []llm.Choice{{Text: "t", Logprobs: []json.RawMessage{json.RawMessage(`{"content": [ {"token":"t","logprob":-0.1} ]}`),
			json.RawMessage(`{"content":[{"token":"u","logprob":-0.2}]}`)}, Finish: "stop"}}},
	}
}

func TestCompletionBytes(t *testing.T) {
	for i, resp := range responses() {
		got, want := completion("chatcmpl-1", 7, "m<&>", resp), reference("chatcmpl-1", 7, "m<&>", resp)
		if !bytes.Equal(got, want) {
			t.Errorf("response %d:\ngot  %s\nwant %s", i, got, want)
		}
	}
}

// Any text, refusal, reasoning or tool call comes out as encoding/json writes it.
func FuzzCompletion(f *testing.F) {
	f.Add("hi", "", "", "", "", false, uint8(0))
	f.Add("", "no", "", "", "", true, uint8(3))
	f.Add("a\u2029\x00\xc3", "", "think", "c1", `{"x":"\u00e9"}`, true, uint8(9))
	f.Fuzz(func(t *testing.T, text, refusal, reasoning, id, args string, field bool, n uint8) {
		ch := llm.Choice{Index: int(n % 4), Text: text, Refusal: refusal, Reasoning: reasoning, Finish: string(rune('a' + n%26))}
		if field {
			ch.ReasoningField = "reasoning"
		}
		if id != "" {
			ch.ToolCalls = []llm.ToolCall{{ID: id, Name: text, Arguments: args}}
		}
		resp := &llm.Response{Choices: []llm.Choice{ch, ch}, Usage: llm.Usage{TotalTokens: int(n)}}
		if got, want := completion(id, int64(n), refusal, resp), reference(id, int64(n), refusal, resp); !bytes.Equal(got, want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
}

func BenchmarkCompletion(b *testing.B) {
	resp := &llm.Response{Choices: []llm.Choice{{Text: "Hello there, this is a two hundred byte answer of the mock's bench script. " +
		"It has a few sentences, some punctuation, and nothing to escape but a quote: \"ok\".", Finish: "stop"}},
		Usage: llm.Usage{PromptTokens: 12, CompletionTokens: 20, TotalTokens: 32}}
	b.ReportAllocs()
	for b.Loop() {
		completion("chatcmpl-1", 7, "mock/text", resp)
	}
}
