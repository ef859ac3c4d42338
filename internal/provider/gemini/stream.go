package gemini

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
	"github.com/sluice-gw/sluice/internal/schema/gemini"
	"github.com/sluice-gw/sluice/internal/sse"
)

// reasoningField is the Chat Completions field thought summaries go out in.
const reasoningField = "reasoning_content"

// stream is a streamGenerateContent answer as an llm.Stream. Not safe for concurrent use,
// except Close, which unblocks a Recv in progress by closing the body.
type stream struct {
	transport.Body
	origin
	rd *sse.Reader
	q  transport.Queue

	id      string // the answer's id (responseId), in the ids of its calls
	n       int    // choices asked for
	started bool   // EvStart queued
	calls   []int
	finish  []string // per choice, "" until its finishReason came
	blocked string   // promptFeedback.blockReason
	usage   *gemini.UsageMetadata
}

func newStream(ctx context.Context, o origin, n int, body io.ReadCloser) *stream {
	return &stream{Body: transport.NewBody(ctx, o.name, body), origin: o, rd: sse.NewReader(body, maxEvent),
		n: n, calls: make([]int, n), finish: make([]string, n)}
}

// Recv returns the next event. io.EOF means the answer is complete: the body ended cleanly
// after every choice's finishReason (or a blocked prompt). A body that ends before, or
// inside an event, ends with a Truncated *llm.Error; an error event is RateLimited, Auth or
// Unavailable (streamError); an event that is not JSON is Unavailable. A canceled context
// is Canceled (or Timeout, by its cause), a closed stream Canceled. Errors are sticky.
func (s *stream) Recv() (llm.Event, error) { return s.q.Recv(s) }

// BeforeWait implements llm.Waiter: f runs before each read of the body, and before the
// drain that follows a complete answer.
func (s *stream) BeforeWait(f func()) {
	s.OnWait(f)
	s.rd.BeforeRead(f)
}

var _ llm.Waiter = (*stream)(nil)

// Fill implements transport.Source: it reads one SSE event and queues its llm.Events.
func (s *stream) Fill() error {
	ev, err := s.rd.Next()
	if err != nil {
		return s.endError(err)
	}
	data := bytes.TrimSpace(ev.Data)
	if len(data) == 0 {
		return nil
	}
	var r gemini.Response
	if err := json.Unmarshal(data, &r); err != nil {
		return &llm.Error{Kind: llm.Unavailable, Message: s.name + " sent an event that is not JSON", Err: err}
	}
	return s.chunk(&r)
}

// chunk queues the llm.Events of r, one chunk of the answer (or the whole of a plain one),
// and returns io.EOF once every choice finished.
func (s *stream) chunk(r *gemini.Response) error {
	if r.Error != nil {
		return s.streamError(r.Error)
	}
	if !s.started {
		s.started = true
		if s.id = r.ResponseID; s.id == "" {
			s.id = rand.Text()[:12]
		}
		s.q.Push(llm.Event{Type: llm.EvStart, ID: r.ResponseID, Model: r.ModelVersion})
	}
	if r.UsageMetadata != nil {
		s.usage = r.UsageMetadata
	}
	if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
		s.blocked = r.PromptFeedback.BlockReason
	}
	for i := range r.Candidates {
		if err := s.candidate(&r.Candidates[i]); err != nil {
			return err
		}
	}
	if s.done() {
		s.end()
		return io.EOF
	}
	return nil
}

func (s *stream) candidate(c *gemini.Candidate) error {
	i := c.Index
	if i < 0 || i >= s.n {
		return llm.Errorf(llm.Unavailable, "%s sent candidate %d of %d", s.name, i, s.n)
	}
	if c.Content != nil {
		for _, p := range c.Content.Parts {
			s.part(i, &p)
		}
	}
	if c.FinishReason != "" {
		s.finish[i] = c.FinishReason
	}
	return nil
}

func (s *stream) part(i int, p *gemini.Part) {
	switch {
	case p.FunctionCall != nil:
		fc := p.FunctionCall
		id := fc.ID
		if id == "" {
			// The Gemini API gives calls no id: one the client can send back, which the
			// request translation knows not to forward.
			// Unique in the conversation: named after the answer (or a random token).
			id = fmt.Sprintf("%s%s_%d_%d", syntheticID, s.id, i, s.calls[i])
		}
		args := "{}"
		if a := bytes.TrimSpace(fc.Args); len(a) > 0 && a[0] == '{' {
			var b bytes.Buffer
			if json.Compact(&b, a) == nil {
				args = b.String()
			}
		}
		s.q.Push(llm.Event{Type: llm.EvToolCall, Choice: i, Tool: llm.ToolDelta{Index: s.calls[i], ID: id, Name: fc.Name, Args: args}})
		s.calls[i]++
		if p.ThoughtSignature != "" {
			// The signature belongs to this call's part: the next turn puts it back there.
			s.q.Push(llm.Event{Type: llm.EvReasoning, Choice: i, Field: reasoningField, Encrypted: p.ThoughtSignature, ID: id})
		}
		return
	case p.Thought:
		if p.Text != "" {
			s.q.Push(llm.Event{Type: llm.EvReasoning, Choice: i, Field: reasoningField, Text: p.Text})
		}
	case p.Text != "":
		s.q.Push(llm.Event{Type: llm.EvText, Choice: i, Text: p.Text})
	}
	if p.ThoughtSignature != "" {
		s.q.Push(llm.Event{Type: llm.EvReasoning, Choice: i, Field: reasoningField, Encrypted: p.ThoughtSignature})
	}
}

// done reports whether every choice finished, or the prompt was blocked.
func (s *stream) done() bool {
	if s.blocked != "" {
		return true
	}
	for _, f := range s.finish {
		if f == "" {
			return false
		}
	}
	return true
}

// end queues the usage and each finished choice's finish.
func (s *stream) end() {
	if u := s.usage; u != nil && (u.PromptTokenCount > 0 || u.TotalTokenCount > 0) {
		prompt := u.PromptTokenCount + u.ToolUsePromptTokenCount
		completion := u.CandidatesTokenCount + u.ThoughtsTokenCount
		s.q.Push(llm.Event{Type: llm.EvUsage, Usage: &llm.Usage{PromptTokens: prompt, CompletionTokens: completion,
			TotalTokens: prompt + completion, CachedTokens: u.CachedContentTokenCount, ReasoningTokens: u.ThoughtsTokenCount}})
	}
	for i, f := range s.finish {
		switch {
		case s.blocked != "" && f == "":
			f = "content_filter"
		case f == "":
			continue
		default:
			f = finishReason(f, s.calls[i] > 0)
		}
		s.q.Push(llm.Event{Type: llm.EvDone, Choice: i, Finish: f})
	}
}

// endError maps the end of the body: complete when at least one choice finished (the
// others, if any, are done with what they had), else Truncated.
func (s *stream) endError(err error) error {
	if e := s.Stopped(); e != nil {
		return e
	}
	switch {
	case errors.Is(err, sse.ErrTooLarge):
		return &llm.Error{Kind: llm.Unavailable, Message: s.name + ": event over the size limit", Err: err}
	case errors.Is(err, sse.ErrCut):
		return &llm.Error{Kind: llm.Truncated, Message: s.name + ": stream cut inside its last event", Err: err}
	case err != io.EOF:
		return &llm.Error{Kind: llm.Truncated, Message: s.name + ": stream read failed: " + err.Error(), Err: err}
	}
	for _, f := range s.finish {
		if f != "" {
			s.end()
			return io.EOF
		}
	}
	return &llm.Error{Kind: llm.Truncated, Message: s.name + ": stream ended before its finishReason"}
}

// finishReason maps a Gemini finishReason to a Chat finish_reason; calls says the choice
// called functions (Gemini says STOP for that too).
func finishReason(r string, calls bool) string {
	switch r {
	case "MAX_TOKENS":
		return "length"
	case "SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY":
		return "content_filter"
	}
	if calls {
		return "tool_calls"
	}
	// STOP, LANGUAGE, OTHER, MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, and reasons
	// added later.
	return "stop"
}
