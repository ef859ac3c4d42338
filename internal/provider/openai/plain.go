package openai

import (
	"context"
	"encoding/json"
	"io"
	"strconv"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
	wire "github.com/sluice-gw/sluice/internal/schema/openai"
)

// completion is the decoder's view of a non-streamed wire.ChatCompletion: a chunk whose
// choices carry a whole message in place of a delta.
type completion struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index        int       `json:"index"`
		Message      wireDelta `json:"message"`
		Logprobs     wire.Raw  `json:"logprobs"`
		FinishReason wire.Text `json:"finish_reason"`
	} `json:"choices"`
	Usage *wire.Usage `json:"usage"`
	Error wire.Raw    `json:"error"`
}

// plainStream is the answer of a non-streamed Chat Completions call (llm.Request.Plain) as
// an llm.Stream: its first Recv reads the whole body and queues the events a stream of the
// same answer carries, through the stream's own choice and usage code, so that the relay
// takes a plain answer as it takes a streamed one. Errors as the stream's: an error object
// in a 200 answer is Unavailable (or RateLimited), a choice without its finish reason is
// Truncated.
type plainStream struct {
	stream
	read bool
}

func newPlainStream(ctx context.Context, o origin, body io.ReadCloser) *plainStream {
	return &plainStream{stream: stream{source: source{origin: o, Body: transport.NewBody(ctx, o.name, body)}}}
}

// Recv implements llm.Stream.
func (s *plainStream) Recv() (llm.Event, error) { return s.q.Recv(s) }

// BeforeWait implements llm.Waiter: f runs before the one read of the body.
func (s *plainStream) BeforeWait(f func()) { s.OnWait(f) }

// Fill implements transport.Source: the whole answer at the first call, its end at the next.
func (s *plainStream) Fill() error {
	if s.read {
		return s.end("the answer left a choice without its finish reason")
	}
	s.read = true
	data, err := s.ReadAll()
	if err != nil {
		return err
	}
	var c completion
	if err := json.Unmarshal(data, &c); err != nil {
		return &llm.Error{Kind: llm.Unavailable, Message: s.name + " answered with something other than a JSON completion", Err: err}
	}
	if c.Error != nil {
		return s.inStreamError(parseErrorBody(data))
	}
	s.started = true
	s.q.Push(llm.Event{Type: llm.EvStart, ID: c.ID, Model: c.Model})
	for i := range c.Choices {
		ch := &c.Choices[i]
		for j := range ch.Message.ToolCalls {
			ch.Message.ToolCalls[j].Index = j // a message's calls are whole and carry no index
		}
		if err := s.choice(&wireChoice{Index: ch.Index, Delta: ch.Message, Logprobs: ch.Logprobs, FinishReason: ch.FinishReason}); err != nil {
			return err
		}
	}
	s.usage(c.Usage)
	return nil
}

// plainResponses is the answer of a non-streamed Responses call (llm.Request.Plain) as an
// llm.Stream: the response object's output items go through the stream's own code as
// response.created, each item's output_item.added and .done (whole), and the terminal event
// its status names, so that the relay takes it as the stream of the same answer.
type plainResponses struct {
	respStream
	read bool
}

func newPlainResponses(ctx context.Context, o origin, body io.ReadCloser, encrypted bool) *plainResponses {
	return &plainResponses{respStream: respStream{source: source{origin: o, Body: transport.NewBody(ctx, o.name, body)}, encrypted: encrypted}}
}

// Recv implements llm.Stream.
func (s *plainResponses) Recv() (llm.Event, error) { return s.q.Recv(s) }

// BeforeWait implements llm.Waiter: f runs before the one read of the body.
func (s *plainResponses) BeforeWait(f func()) { s.OnWait(f) }

// Fill implements transport.Source: the whole answer and its end at the first call.
func (s *plainResponses) Fill() error {
	if s.read {
		return io.EOF
	}
	s.read = true
	data, err := s.ReadAll()
	if err != nil {
		return err
	}
	var r struct {
		respResponse
		Status string     `json:"status"`
		Output []respItem `json:"output"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return &llm.Error{Kind: llm.Unavailable, Message: s.name + " answered with something other than a JSON response", Err: err}
	}
	terminal := map[string]string{"completed": "response.completed", "incomplete": "response.incomplete", "failed": "response.failed"}[r.Status]
	switch {
	case r.Error != nil && r.Status == "" || r.Status == "failed":
		if r.Error == nil {
			r.Error = &wire.Error{Message: "the response failed without an error"}
		}
		return s.inStreamError(*r.Error)
	case terminal == "":
		return &llm.Error{Kind: llm.Truncated, Message: s.name + ": the answer is not a finished response (status " + strconv.Quote(r.Status) + ")"}
	}
	evs := []respEvent{{Type: "response.created", Response: &r.respResponse}}
	for i := range r.Output {
		evs = append(evs, respEvent{Type: "response.output_item.added", OutputIndex: &i, Item: &r.Output[i]},
			respEvent{Type: "response.output_item.done", OutputIndex: &i, Item: &r.Output[i]})
	}
	evs = append(evs, respEvent{Type: terminal, Response: &r.respResponse})
	for i := range evs {
		if err := s.apply(&evs[i]); err != nil {
			return err // io.EOF after the terminal event: the answer is complete
		}
	}
	return &llm.Error{Kind: llm.Internal, Message: s.name + ": the terminal event did not end the answer"}
}
