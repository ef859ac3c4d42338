package chat

import (
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/sse"
)

// stream encodes released events as Chat Completions chunks. It is the Sink of one streamed
// chat request; not safe for concurrent use.
type stream struct {
	ew           *sse.Writer
	buf          []byte
	head         []byte
	includeUsage bool
	started      []bool
	logprobs     [][]byte // pending logprobs per choice, attached to its next chunk
	usage        *llm.Usage
}

func newStream(ew *sse.Writer, id string, created int64, model string, includeUsage bool) *stream {
	return &stream{ew: ew, buf: make([]byte, 0, 512), head: chunkHead(id, created, model), includeUsage: includeUsage}
}

func (s *stream) Event(ev *llm.Event) error {
	switch ev.Type {
	case llm.EvText, llm.EvRefusal, llm.EvReasoning:
		if ev.Text == "" {
			return nil // opaque reasoning content has no Chat Completions field
		}
	case llm.EvToolCall, llm.EvDone:
	case llm.EvLogprobs:
		for len(s.logprobs) <= ev.Choice {
			s.logprobs = append(s.logprobs, nil)
		}
		s.logprobs[ev.Choice] = mergeLogprobs(s.logprobs[ev.Choice], ev.Raw)
		return nil
	case llm.EvUsage:
		u := *ev.Usage
		s.usage = &u
		return nil
	default:
		return nil
	}
	b := s.buf[:0]
	for len(s.started) <= ev.Choice {
		s.started = append(s.started, false)
	}
	if !s.started[ev.Choice] {
		s.started[ev.Choice] = true
		b = s.open(b)
		b = appendRole(b, ev.Choice, ev.Type == llm.EvToolCall || ev.Type == llm.EvRefusal)
		b = append(b, "]}\n\n"...)
	}
	var lp []byte
	if ev.Choice < len(s.logprobs) {
		lp, s.logprobs[ev.Choice] = s.logprobs[ev.Choice], nil
	}
	b = s.open(b)
	b = appendDelta(b, ev, lp)
	b = append(b, "]}\n\n"...)
	s.buf = b
	return s.ew.Frame(b)
}

func (s *stream) open(b []byte) []byte {
	b = append(b, "data: "...)
	return append(b, s.head...)
}

// end writes the usage chunk when the client asked for it, then [DONE].
func (s *stream) end(u *llm.Usage) error {
	b := s.buf[:0]
	if s.includeUsage {
		b = s.open(b)
		b = append(b, `],"usage":`...)
		b = appendUsage(b, u)
		b = append(b, "}\n\n"...)
	}
	b = append(b, "data: [DONE]\n\n"...)
	s.buf = b
	return s.ew.Frame(b)
}

// inband is the in-band error frame: no event: line (the shape the OpenAI SDKs raise on), and
// no [DONE] after it, so no client mistakes a cut answer for a whole one.
func inband(body []byte) []byte {
	b := make([]byte, 0, len(body)+8)
	b = append(b, "data: "...)
	b = append(b, body...)
	return append(b, "\n\n"...)
}
