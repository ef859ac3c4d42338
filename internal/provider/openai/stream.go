package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
	wire "github.com/sluice-gw/sluice/internal/schema/openai"
	"github.com/sluice-gw/sluice/internal/sse"
)

// maxChoices bounds the choice index a chunk may name: OpenAI allows n <= 128, and a bogus
// index must not size the state slice.
const maxChoices = 1024

// source is the event-stream body of an answer, shared by the Chat Completions and the
// Responses streams: it decides how a read that failed ends the stream. Not safe for
// concurrent use, except Close.
type source struct {
	origin
	transport.Body
	dec *sse.Reader
}

var (
	_ llm.Waiter = (*stream)(nil)
	_ llm.Waiter = (*respStream)(nil)
)

// newSource reads body with events of at most max bytes.
func newSource(ctx context.Context, o origin, body io.ReadCloser, max int) source {
	return source{origin: o, Body: transport.NewBody(ctx, o.name, body), dec: sse.NewReader(body, max)}
}

// stream is a Chat Completions answer as an llm.Stream. Not safe for concurrent use, except
// Close, which unblocks a Recv in progress by closing the body.
type stream struct {
	source
	json *decoder // made when a chunk first needs the full decode: most streams never do

	chunk   chunk
	head    head            // of the first chunk; a field, so that decoding it allocates nothing
	pre     prefix          // the opening every chunk repeats, which decodeFast scans once
	q       transport.Queue // events of the current chunk; the error is io.EOF after a complete answer
	started bool
	// state per choice index: 0 not seen, 1 open, 2 finished.
	state          []uint8
	seen, finished int
}

func newStream(ctx context.Context, o origin, body io.ReadCloser) *stream {
	return &stream{source: newSource(ctx, o, body, maxEvent)}
}

// Recv returns the next event. io.EOF means the answer is complete: every choice it named
// has its finish reason (a missing [DONE] or usage chunk after that does not matter). A
// stream that ends or is cut before that ends with a Truncated *llm.Error; an error event
// from the provider is Unavailable (or RateLimited); a data line that is not JSON is
// Unavailable, since the upstream is not speaking the protocol (a last event cut at EOF
// is Truncated instead). If ctx was canceled, the error is Canceled (or Timeout), whatever
// the read saw. Errors are sticky.
func (s *stream) Recv() (llm.Event, error) { return s.q.Recv(s) }

// BeforeWait implements llm.Waiter: f runs before each read of the body, and before the
// drain that follows a complete answer.
func (s *source) BeforeWait(f func()) {
	s.OnWait(f)
	s.dec.BeforeRead(f)
}

var done = []byte("[DONE]")

// Fill implements transport.Source: it reads one SSE event and queues its llm.Events, or
// returns the error that ends the stream. Once it has, the stream reads no more events (the
// queue's errors are sticky) and the events it queued hold copies, not the reader's bytes:
// the reader's buffers go back to their pool.
func (s *stream) Fill() error {
	err := s.fill()
	if err != nil {
		s.dec.Release()
	}
	return err
}

func (s *stream) fill() error {
	ev, err := s.dec.Next()
	if err != nil {
		return s.readError(err, func() error { return s.end("stream ended before every choice finished") })
	}
	data := bytes.TrimSpace(ev.Data)
	if bytes.Equal(data, done) {
		return s.end("[DONE] came before every choice finished")
	}
	if len(data) == 0 {
		return nil // an empty event carries nothing; some servers send them to keep alive
	}
	if ev.Type == "error" {
		// Groq and others name the event; the payload is {"error":{...}} or flat.
		return s.inStreamError(parseErrorBody(data))
	}
	s.chunk.reset()
	first := &s.head // the head is decoded from the first chunk only: later chunks repeat it
	if s.started {
		first = nil
	}
	s.pre.ahead = s.dec.Buffered()
	if !decodeFast(data, &s.chunk, first, &s.pre) {
		s.chunk.reset()
		s.head = head{}
		if s.json == nil {
			s.json = newDecoder()
		}
		if err := s.json.decode(data, &s.chunk); err != nil {
			return &llm.Error{Kind: llm.Unavailable, Message: s.name + " sent an event that is not a JSON chunk", Err: err}
		}
	}
	if s.chunk.Error != nil {
		return s.inStreamError(parseErrorBody(data))
	}
	if !s.started {
		s.started = true
		if s.head == (head{}) {
			json.Unmarshal(data, &s.head) // cannot fail: the same bytes decoded above
		}
		s.q.Push(llm.Event{Type: llm.EvStart, ID: s.head.ID, Model: s.head.Model})
	}
	for i := range s.chunk.Choices {
		if err := s.choice(&s.chunk.Choices[i]); err != nil {
			return err
		}
	}
	s.usage(s.chunk.Usage)
	return nil
}

// usage queues the usage event of u, if any.
func (s *stream) usage(u *wire.Usage) {
	if u == nil {
		return
	}
	cached := 0
	if d := u.PromptTokensDetails; d != nil {
		cached = d.CachedTokens
	}
	s.q.Push(llm.Event{Type: llm.EvUsage, Usage: &llm.Usage{
		PromptTokens:     u.PromptTokens,
		CompletionTokens: u.CompletionTokens,
		TotalTokens:      u.TotalTokens,
		CachedTokens:     cached,
		ReasoningTokens:  u.CompletionTokensDetails.ReasoningTokens,
	}})
}

// choice queues the events of one choice of a chunk: logprobs first (they describe the
// tokens of this chunk's content), then reasoning, content, refusal, tool-call fragments,
// and the finish reason last.
func (s *stream) choice(c *wireChoice) error {
	i := c.Index
	if i < 0 || i >= maxChoices {
		return llm.Errorf(llm.Unavailable, "%s sent choice index %d", s.name, i)
	}
	for len(s.state) <= i {
		s.state = append(s.state, 0)
	}
	if s.state[i] == 0 {
		s.state[i] = 1
		s.seen++
	}
	if c.Logprobs != nil {
		s.q.Push(llm.Event{Type: llm.EvLogprobs, Choice: i, Raw: json.RawMessage(c.Logprobs)})
	}
	d := &c.Delta
	if d.Reasoning != "" {
		s.q.Push(llm.Event{Type: llm.EvReasoning, Choice: i, Text: string(d.Reasoning), Field: "reasoning"})
	}
	if d.ReasoningContent != "" {
		s.q.Push(llm.Event{Type: llm.EvReasoning, Choice: i, Text: string(d.ReasoningContent), Field: "reasoning_content"})
	}
	if d.Content != "" {
		s.q.Push(llm.Event{Type: llm.EvText, Choice: i, Text: string(d.Content)})
	}
	if d.Refusal != "" {
		s.q.Push(llm.Event{Type: llm.EvRefusal, Choice: i, Text: string(d.Refusal)})
	}
	for _, tc := range d.ToolCalls {
		s.q.Push(llm.Event{Type: llm.EvToolCall, Choice: i, Tool: llm.ToolDelta{
			Index: tc.Index, ID: tc.ID, Name: tc.Function.Name, Args: string(tc.Function.Arguments),
		}})
	}
	if c.FinishReason != "" && s.state[i] != 2 {
		// Only the first finish of a choice counts; some servers repeat it.
		s.state[i] = 2
		s.finished++
		s.q.Push(llm.Event{Type: llm.EvDone, Choice: i, Finish: string(c.FinishReason)})
	}
	return nil
}

// end is the end of the body or [DONE]: complete when at least one choice was seen and all
// seen have finished, else Truncated with msg.
func (s *stream) end(msg string) error {
	if err := s.Stopped(); err != nil {
		return err
	}
	if s.finished > 0 && s.finished == s.seen {
		return io.EOF
	}
	return &llm.Error{Kind: llm.Truncated, Message: s.name + ": " + msg}
}

// readError is the error that ends the stream after the read failure err; atEOF decides a
// body that ended cleanly between events.
func (s *source) readError(err error, atEOF func() error) error {
	switch {
	case err == io.EOF:
		return atEOF()
	case errors.Is(err, sse.ErrCut):
		if e := s.Stopped(); e != nil {
			return e
		}
		return &llm.Error{Kind: llm.Truncated, Message: s.name + ": stream cut inside its last event", Err: err}
	}
	if e := s.Stopped(); e != nil {
		return e
	}
	if errors.Is(err, sse.ErrTooLarge) {
		return &llm.Error{Kind: llm.Unavailable, Message: s.name + ": event over the size limit", Err: err}
	}
	// The connection broke mid-answer.
	return &llm.Error{Kind: llm.Truncated, Message: s.name + ": stream read failed: " + err.Error(), Err: err}
}
