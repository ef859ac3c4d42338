package gemini

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/llm"
	wire "github.com/sluice-gw/sluice/internal/schema/gemini"
	"github.com/sluice-gw/sluice/internal/sse"
)

var _ dialect.Wire = (*Wire)(nil)

// Wire is the Gemini wire of one request: GenerateContentResponse chunks, one per text,
// thought or functionCall part, then one with the finishReason and the usageMetadata; as
// SSE events (alt=sse) or the elements of one JSON array, which a client reads as they come
// (the headers are the gateway's event stream's in both cases). Not safe for concurrent use.
type Wire struct {
	id       string
	sse      bool
	thoughts bool

	ew      *sse.Writer
	model   string
	n       int  // elements written
	open    bool // the array's "[" was written
	closed  bool // the stream's end (or its error) was written
	finish  string
	pending *wire.Part // the last function call, held for its signature
	callID  string     // its llm id
	buf     []byte
}

// NewWire is the wire of one request; id is the answer's responseId, sse says alt=sse, and
// thoughts that thought summaries go out as thought parts (thinkingConfig.includeThoughts).
func NewWire(id string, sse, thoughts bool) *Wire { return &Wire{id: id, sse: sse, thoughts: thoughts} }

// Open starts the stream served by model on ew (the array's "[") and returns the sink the
// round is relayed to.
func (w *Wire) Open(ew *sse.Writer, model string) (dialect.Sink, error) {
	w.ew, w.model = ew, model
	if w.sse {
		return w, nil
	}
	w.open = true
	return w, ew.Frame([]byte("["))
}

// Event writes one released event of choice 0 (the only candidate this wire asks for).
func (w *Wire) Event(ev *llm.Event) error {
	if ev.Choice != 0 {
		return nil
	}
	switch ev.Type {
	case llm.EvText, llm.EvRefusal:
		if ev.Text == "" {
			return nil
		}
		return w.part(&wire.Part{Text: ev.Text})
	case llm.EvReasoning:
		if ev.Encrypted != "" && w.pending != nil && ev.ID == w.callID {
			w.pending.ThoughtSignature = ev.Encrypted // the call's own signature
			return w.flush()
		}
		if ev.Text != "" && w.thoughts {
			if err := w.part(&wire.Part{Text: ev.Text, Thought: true}); err != nil {
				return err
			}
		}
		if ev.Encrypted != "" {
			return w.part(&wire.Part{ThoughtSignature: ev.Encrypted})
		}
	case llm.EvToolCall:
		if err := w.flush(); err != nil {
			return err
		}
		w.pending = &wire.Part{FunctionCall: &wire.FunctionCall{ID: clientID(ev.Tool.ID), Name: ev.Tool.Name, Args: args(ev.Tool.Args)}}
		w.callID = ev.Tool.ID
	case llm.EvDone:
		w.finish = ev.Finish
		return w.flush()
	}
	return nil
}

// part writes p as one chunk, after the call held before it.
func (w *Wire) part(p *wire.Part) error {
	if err := w.flush(); err != nil {
		return err
	}
	return w.chunk(&wire.Response{Candidates: []wire.Candidate{{Content: &wire.Content{Role: "model", Parts: []wire.Part{*p}}}},
		ModelVersion: w.model, ResponseID: w.id})
}

// flush writes the held function call, if any.
func (w *Wire) flush() error {
	p := w.pending
	if p == nil {
		return nil
	}
	w.pending = nil
	return w.part(p)
}

// End writes the last chunk, with the finishReason and the usage, and ends the array.
func (w *Wire) End(u *llm.Usage) error {
	if w.ew == nil {
		return dialect.ErrNotOpen
	}
	if err := w.flush(); err != nil {
		return err
	}
	err := w.chunk(&wire.Response{Candidates: []wire.Candidate{{FinishReason: FinishReason(w.finish)}},
		UsageMetadata: usage(u), ModelVersion: w.model, ResponseID: w.id})
	if err != nil {
		return err
	}
	return w.end(w.ew)
}

// Fail writes the in-band failure, Google's error body as the stream's last element, after
// which the stream ends. Open may not have been called (the chain failed after a keepalive
// had sent the headers).
func (w *Wire) Fail(ew *sse.Writer, err error) error {
	if w.closed {
		return nil
	}
	if w.ew != nil {
		_ = w.flush() // a call released before the failure is the client's
	}
	if !w.sse && !w.open {
		w.open = true
		if e := ew.Frame([]byte("[")); e != nil {
			return e
		}
	}
	if e := w.element(ew, ErrorBody(err, llm.HTTPStatus(err))); e != nil {
		return e
	}
	return w.end(ew)
}

func (w *Wire) end(ew *sse.Writer) error {
	w.closed = true
	if w.sse {
		return nil
	}
	return ew.Frame([]byte("]"))
}

func (w *Wire) chunk(r *wire.Response) error {
	b, err := marshal(r)
	if err != nil {
		return err
	}
	return w.element(w.ew, b)
}

// element frames one element: an SSE event ("data: ...", CRLF as Google ends its events),
// or the array's next member.
func (w *Wire) element(ew *sse.Writer, data []byte) error {
	b := w.buf[:0]
	switch {
	case w.sse:
		b = append(b, "data: "...)
	case w.n > 0:
		b = append(b, ",\r\n"...)
	}
	b = append(b, data...)
	if w.sse {
		b = append(b, "\r\n\r\n"...)
	}
	w.buf = b
	w.n++
	return ew.Frame(b)
}

// Attempt is the sink of one attempt of a non-streamed answer: the relay keeps the complete
// response, so it writes nothing.
func (w *Wire) Attempt(string) dialect.Sink { return discard{} }

type discard struct{}

func (discard) Event(*llm.Event) error { return nil }

// Body is the GenerateContentResponse of a complete answer served by model: thought parts
// (when asked for), the text, the function calls with their signatures.
func (w *Wire) Body(model string, resp *llm.Response) []byte {
	r := wire.Response{ModelVersion: model, ResponseID: w.id, UsageMetadata: usage(&resp.Usage)}
	c := wire.Candidate{Content: &wire.Content{Role: "model", Parts: []wire.Part{}}, FinishReason: "STOP"}
	if len(resp.Choices) > 0 {
		ch := &resp.Choices[0]
		c.FinishReason = FinishReason(ch.Finish)
		ps := &c.Content.Parts
		if ch.Reasoning != "" && w.thoughts {
			*ps = append(*ps, wire.Part{Text: ch.Reasoning, Thought: true})
		}
		if t := ch.Text + ch.Refusal; t != "" {
			*ps = append(*ps, wire.Part{Text: t})
		}
		at := map[string]int{}
		for _, tc := range ch.ToolCalls {
			at[tc.ID] = len(*ps)
			*ps = append(*ps, wire.Part{FunctionCall: &wire.FunctionCall{ID: clientID(tc.ID), Name: tc.Name, Args: args(tc.Arguments)}})
		}
		for _, o := range ch.Opaque {
			if o.Encrypted == "" {
				continue
			}
			j, ok := at[o.ID]
			if !ok && len(*ps) > 0 && o.ID == "" {
				j, ok = 0, true
			}
			if ok && (*ps)[j].ThoughtSignature == "" {
				(*ps)[j].ThoughtSignature = o.Encrypted
				continue
			}
			*ps = append(*ps, wire.Part{ThoughtSignature: o.Encrypted})
		}
	}
	r.Candidates = []wire.Candidate{c}
	b, _ := marshal(&r)
	return b
}

// FinishReason is Google's finishReason of a Chat finish reason: length MAX_TOKENS,
// content_filter SAFETY, any other STOP (Google says STOP after function calls too).
func FinishReason(finish string) string {
	switch finish {
	case "length":
		return "MAX_TOKENS"
	case "content_filter":
		return "SAFETY"
	}
	return "STOP"
}

// usage is llm's usage as usageMetadata: candidatesTokenCount leaves out the thoughts,
// which thoughtsTokenCount counts.
func usage(u *llm.Usage) *wire.UsageMetadata {
	return &wire.UsageMetadata{PromptTokenCount: u.PromptTokens, CandidatesTokenCount: max(u.CompletionTokens-u.ReasoningTokens, 0),
		TotalTokenCount: u.PromptTokens + u.CompletionTokens, CachedContentTokenCount: u.CachedTokens, ThoughtsTokenCount: u.ReasoningTokens}
}

// clientID is a call's id as the client sees it: none for the ids the gateway made up.
func clientID(id string) string {
	if strings.HasPrefix(id, SyntheticID) {
		return ""
	}
	return id
}

// args is a call's arguments as functionCall.args: the JSON object, compacted, or {} for
// arguments that are empty or not an object (a call cut by maxOutputTokens).
func args(a string) json.RawMessage {
	var c bytes.Buffer
	if t := strings.TrimSpace(a); !strings.HasPrefix(t, "{") || json.Compact(&c, []byte(t)) != nil {
		return json.RawMessage(`{}`)
	}
	return c.Bytes()
}

// marshal is JSON without HTML escaping, as Google writes it.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
