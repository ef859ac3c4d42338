package chat

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
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

// completion encodes the assembled chat.completion object, by hand as the chunks are:
// encoding/json's reflection over wire.ChatCompletion was 2.7% of the gateway's CPU per
// non-streamed request. TestCompletionBytes and FuzzCompletion hold it to the bytes
// encoding/json writes for wire.ChatCompletion (without HTML escaping).
func completion(id string, created int64, model string, resp *llm.Response) []byte {
	n := 256 + len(id) + len(model)
	for i := range resp.Choices {
		ch := &resp.Choices[i]
		n += 160 + len(ch.Text) + len(ch.Refusal) + len(ch.Reasoning)
		for _, tc := range ch.ToolCalls {
			n += 96 + len(tc.ID) + len(tc.Name) + len(tc.Arguments)
		}
	}
	b := make([]byte, 0, n)
	b = append(b, `{"id":`...)
	b = oai.AppendString(b, id)
	b = append(b, `,"object":"chat.completion","created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"model":`...)
	b = oai.AppendString(b, model)
	b = append(b, `,"choices":[`...)
	for i := range resp.Choices {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendChoice(b, &resp.Choices[i])
	}
	b = append(b, `],"usage":`...)
	b = appendUsage(b, &resp.Usage) // prompt_tokens_details is always written, as OpenAI does
	return append(b, '}')
}

// appendChoice appends one choice of a chat.completion: content null for a refusal or a
// tool-call-only answer, refusal null for an answer, the reasoning under the field it came in.
func appendChoice(b []byte, ch *llm.Choice) []byte {
	b = append(b, `{"index":`...)
	b = oai.AppendInt(b, ch.Index)
	b = append(b, `,"message":{"role":"assistant","content":`...)
	if ch.Text != "" || (ch.Refusal == "" && len(ch.ToolCalls) == 0) {
		b = oai.AppendString(b, ch.Text)
	} else {
		b = append(b, `null`...)
	}
	b = append(b, `,"refusal":`...)
	if ch.Refusal != "" {
		b = oai.AppendString(b, ch.Refusal)
	} else {
		b = append(b, `null`...)
	}
	if ch.Reasoning != "" {
		if ch.ReasoningField == "reasoning" {
			b = append(b, `,"reasoning":`...)
		} else {
			b = append(b, `,"reasoning_content":`...)
		}
		b = oai.AppendString(b, ch.Reasoning)
	}
	if len(ch.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for j, tc := range ch.ToolCalls {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = oai.AppendString(b, tc.ID)
			b = append(b, `,"type":"function","function":{"name":`...)
			b = oai.AppendString(b, tc.Name)
			b = append(b, `,"arguments":`...)
			b = oai.AppendString(b, tc.Arguments)
			b = append(b, `}}`...)
		}
		b = append(b, ']')
	}
	b = append(b, `},"logprobs":`...)
	b = appendRaw(b, joinLogprobs(ch.Logprobs))
	b = append(b, `,"finish_reason":`...)
	b = oai.AppendString(b, ch.Finish)
	return append(b, '}')
}

// appendRaw appends a raw JSON value compacted, as encoding/json writes a json.RawMessage;
// null for none, or for one that is not JSON (encoding/json would fail the whole body).
func appendRaw(b []byte, raw json.RawMessage) []byte {
	if raw == nil {
		return append(b, `null`...)
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return append(b, `null`...)
	}
	return append(b, buf.Bytes()...)
}
