package chat

import (
	"bytes"
	"encoding/json"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
	wire "github.com/sluice-gw/sluice/internal/schema/openai"
	"github.com/sluice-gw/sluice/internal/sse"
)

// Sink is what the relay writes a round to (dialect.Sink).
type Sink = dialect.Sink

var _ dialect.Wire = (*Wire)(nil)

// Wire is the Chat Completions wire of one request: chunks, the usage chunk when asked,
// [DONE]; the in-band error frame; the chat.completion body.
type Wire struct {
	id           string
	created      int64
	includeUsage bool
	sink         *stream
}

// NewWire is the wire of one request: id is the completion's ("chatcmpl-..."), created its
// Unix time, includeUsage the client's stream_options.include_usage.
func NewWire(id string, created int64, includeUsage bool) *Wire {
	return &Wire{id: id, created: created, includeUsage: includeUsage}
}

// Open starts the committed stream of the served model on ew and returns the sink the round
// is relayed to. Chat Completions has no opening event: the first chunk opens the stream.
func (w *Wire) Open(ew *sse.Writer, model string) (Sink, error) {
	w.sink = newStream(ew, w.id, w.created, model, w.includeUsage)
	return w.sink, nil
}

// End writes the usage chunk when the client asked for it, then [DONE], after a complete
// round.
func (w *Wire) End(u *llm.Usage) error {
	if w.sink == nil {
		return dialect.ErrNotOpen
	}
	return w.sink.end(u)
}

// Fail writes the in-band error frame; Open may not have been called (the chain failed after a
// keepalive had sent the headers).
func (w *Wire) Fail(ew *sse.Writer, err error) error { return ew.Frame(inband(oai.ErrorBody(err))) }

// Attempt is the sink of one attempt of a non-streamed answer: the relay keeps the complete
// response, so it writes nothing.
func (w *Wire) Attempt(model string) Sink { return discard{} }

// Body is the chat.completion body of a complete non-streamed answer served by model.
func (w *Wire) Body(model string, resp *llm.Response) []byte {
	return completion(w.id, w.created, model, resp)
}

// discard is the sink of a non-streamed request: the relay keeps the complete response.
type discard struct{}

func (discard) Event(*llm.Event) error { return nil }

// completion encodes the assembled chat.completion object.
func completion(id string, created int64, model string, resp *llm.Response) []byte {
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
