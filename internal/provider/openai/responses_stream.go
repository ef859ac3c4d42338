package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
	wire "github.com/sluice-gw/sluice/internal/schema/openai"
)

// maxRespEvent caps one Responses event. Larger than maxEvent: response.created and
// response.completed repeat the instructions, the tools and (completed) the whole output
// with its encrypted reasoning, and a limit hit at response.completed would fail an answer
// the client has already seen.
const maxRespEvent = 64 << 20

// respStream is a Responses answer as an llm.Stream. Every event belongs to choice 0: the
// Responses API has no n. Not safe for concurrent use, except Close, which unblocks a Recv
// in progress by closing the body.
type respStream struct {
	source
	json *decoder
	ev   respEvent
	// encrypted says the client asked for reasoning.encrypted_content.
	encrypted bool

	q       transport.Queue // events of the current wire event; the error is io.EOF after a terminal event
	started bool
	items   []itemState // output items, in the order they were announced
	calls   int         // function calls and raw items so far: the Tool.Index of the next one
	called  bool        // a function was called: the finish is tool_calls
	// lastPart is the reasoning part the last reasoning text came from, so that the text of
	// the next part is set apart as the Responses API sets summary parts apart.
	lastPart  reasoningPart
	reasoning bool
	// progressBytes are the bytes of hosted tools' progress events kept so far (maxProgress).
	progressBytes int
}

func newResponsesStream(ctx context.Context, o origin, body io.ReadCloser, encrypted bool) *respStream {
	return &respStream{source: newSource(ctx, o, body, maxRespEvent), json: newDecoder(), encrypted: encrypted}
}

// Recv returns the next event. io.EOF means the answer is complete: response.completed or
// response.incomplete came (after it, the adapter only drains the body's closing chunk). A stream that ends or is
// cut before that ends with a Truncated *llm.Error; response.failed and the error event
// are Unavailable or RateLimited, with the upstream's code; an event that is not JSON is
// Unavailable. If ctx was canceled, the error is Canceled (or Timeout), whatever the read
// saw. Errors are sticky.
func (s *respStream) Recv() (llm.Event, error) { return s.q.Recv(s) }

func (s *respStream) push(ev llm.Event) { s.q.Push(ev) }

// atEOF is the end of the body before a terminal event.
func (s *respStream) atEOF() error {
	if err := s.Stopped(); err != nil {
		return err
	}
	return &llm.Error{Kind: llm.Truncated, Message: s.name + ": stream ended before response.completed"}
}

// Fill implements transport.Source: it reads one SSE event and queues its llm.Events, or
// returns the error that ends the stream (io.EOF after a terminal event).
func (s *respStream) Fill() error {
	sev, err := s.dec.Next()
	if err != nil {
		return s.readError(err, s.atEOF)
	}
	data := bytes.TrimSpace(sev.Data)
	if len(data) == 0 {
		return nil
	}
	if bytes.Equal(data, done) {
		return s.atEOF() // not OpenAI's, but a compatible server may end this way
	}
	s.ev = respEvent{}
	if err := s.json.decode(data, &s.ev); err != nil {
		s.json = newDecoder() // a decoder is unusable after an error
		var t struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(data, &t) != nil {
			return &llm.Error{Kind: llm.Unavailable, Message: s.name + " sent an event that is not JSON", Err: err}
		}
		if t.Type == "" {
			t.Type = sev.Type
		}
		if respHandled(t.Type) {
			return &llm.Error{Kind: llm.Unavailable, Message: s.name + " sent a malformed " + t.Type + " event", Err: err}
		}
		return nil // an event type the adapter does not read, in a shape it does not know
	}
	ev := &s.ev
	if ev.Type == "" {
		ev.Type = sev.Type // the type is in the data on OpenAI's wire; some servers name only the event
	}
	if !respHandled(ev.Type) {
		s.progress(ev, data)
		return nil
	}
	return s.apply(ev)
}

// apply queues the llm.Events of the decoded event ev, or returns the error that ends the
// stream (io.EOF after a terminal event).
func (s *respStream) apply(ev *respEvent) error {
	switch ev.Type {
	case "response.created":
		if !s.started {
			s.started = true
			start := llm.Event{Type: llm.EvStart}
			if r := ev.Response; r != nil {
				start.ID, start.Model = r.ID, r.Model
			}
			s.push(start)
		}
	case "response.output_text.delta", "response.refusal.delta":
		it, err := s.item(ev.ItemID, ev.OutputIndex)
		if err != nil || ev.Delta == "" {
			return err
		}
		it.text = true
		t := llm.EvText
		if ev.Type == "response.refusal.delta" {
			t = llm.EvRefusal
		}
		s.push(llm.Event{Type: t, Text: string(ev.Delta)})
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		it, err := s.item(ev.ItemID, ev.OutputIndex)
		if err != nil {
			return err
		}
		it.summary = true
		s.reason(ev.ItemID, ev.SummaryIndex, string(ev.Delta))
	case "response.output_item.added":
		return s.added(ev)
	case "response.function_call_arguments.delta", "response.function_call_arguments.done":
		it, err := s.item(ev.ItemID, ev.OutputIndex)
		if err != nil {
			return err
		}
		args := ev.Delta
		if ev.Type == "response.function_call_arguments.done" {
			// The whole text again: sent only when no delta carried it.
			if it.args {
				return nil
			}
			args = ev.Arguments
		}
		s.callArgs(it, "", "", string(args))
	case "response.output_item.done":
		return s.itemDone(ev)
	case "response.completed":
		return s.end(ev.Response, "")
	case "response.incomplete":
		// Cut short: by the output limit, or by the content filter (the reasons the API names).
		finish := "length"
		if r := ev.Response; r != nil && r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "content_filter" {
			finish = "content_filter"
		}
		return s.end(ev.Response, finish)
	case "response.failed":
		we := wire.Error{Message: "response.failed without an error"}
		if r := ev.Response; r != nil && r.Error != nil {
			we = *r.Error
		}
		return s.inStreamError(we)
	case "error":
		we := wire.Error{Message: ev.Message, Code: ev.Code, Param: ev.Param}
		switch {
		case len(ev.Error) > 0 && ev.Error[0] == '{':
			// Nested: its members win over the flat ones, when a server sends both.
			json.Unmarshal(ev.Error, &we)
		case len(ev.Error) > 0 && ev.Error[0] == '"':
			json.Unmarshal(ev.Error, &we.Message) // {"error": "text"}
		}
		return s.inStreamError(we)
	}
	return nil
}

// end queues the usage and the finish of a terminal event and ends the stream. An empty
// finish is decided here: tool_calls when the response called a function, else stop.
func (s *respStream) end(r *respResponse, finish string) error {
	if r != nil && r.Usage != nil {
		u := r.Usage
		s.push(llm.Event{Type: llm.EvUsage, Usage: &llm.Usage{
			PromptTokens:     u.InputTokens,
			CompletionTokens: u.OutputTokens,
			TotalTokens:      u.TotalTokens,
			CachedTokens:     u.InputTokensDetails.CachedTokens,
			ReasoningTokens:  u.OutputTokensDetails.ReasoningTokens,
		}})
	}
	if finish == "" {
		finish = "stop"
		if s.called {
			finish = "tool_calls"
		}
	}
	s.push(llm.Event{Type: llm.EvDone, Finish: finish})
	return io.EOF
}
