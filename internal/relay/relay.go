package relay

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Sink receives what the relay releases, in order: EvStart, text, refusal and reasoning
// deltas as the redaction windows release them, EvLogprobs, whole tool calls (EvToolCall with
// the complete arguments, at the end of their choice) and raw output items (EvItem, in their
// place among the calls, redacted as JSON), EvDone per choice, EvUsage. The event
// is only valid during the call. An error from the sink ends the round (the client left).
type Sink interface {
	Event(ev *llm.Event) error
}

// Window is a redaction window (redact.Window): Write returns what may be released, Flush
// returns the rest at the end of the text, Counts the masks applied per detector.
type Window interface {
	Write(piece string) string
	Flush() string
	Counts() map[string]int
}

// Options configure a round. The zero value relays without redaction.
type Options struct {
	// NewWindow returns a fresh window for one choice and kind; nil relays text as it comes.
	NewWindow func() Window
	// RedactJSON masks secrets in the raw JSON of tool-call arguments, keeping it valid.
	RedactJSON func(string) string
	// Start is when the round started, for the time to first text.
	Start time.Time
	// ThinkFilter moves <think>...</think> spans of the answer text into reasoning.
	ThinkFilter bool
	// Coalesce merges tiny deltas before the wire (off by default).
	Coalesce Coalesce
	// Now is the clock of coalescing intervals (nil: time.Now).
	Now func() time.Time
}

// kinds of text that get a window each.
const (
	kText = iota
	kRefusal
	kReasoning
	nKinds
)

type call struct {
	id, name string
	args     strings.Builder
	// item is the raw output item (EvItem) that holds this place instead of a call, and
	// progress its own progress events.
	item     []byte
	progress []json.RawMessage
}

type choiceState struct {
	win   [nKinds]Window
	calls []*call
	// out accumulates released text per kind; a builder, so a long answer costs linear time.
	out   [nKinds]strings.Builder
	held  [nKinds]held // text coalescing keeps back
	done  bool
	field string // reasoning wire field
	// reasoning: reasoning text came since the answer last started (see endReasoning).
	reasoning bool
	think     *thinkFilter
	// block is the raw text of the reasoning block in progress: its opaque end hands it back
	// to the provider (an Anthropic signature covers the thinking as written, unredacted).
	block strings.Builder
}

// Run relays s to sink until the end of the round and returns the complete response. It does
// not close s. On failure it returns the response so far with the error; a sink error is
// returned as a Canceled *llm.Error wrapping it.
func Run(ctx context.Context, s llm.Stream, sink Sink, o Options) (*llm.Response, error) {
	r := &round{sink: sink, o: o, resp: &llm.Response{}}
	var ev llm.Event // one for the round: the sink's pointer makes it escape
	for {
		var err error
		ev, err = s.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = r.finish()
			} else {
				_ = r.flushHeld() // what was released is final: the client sees it before the error
			}
			return r.result(), err
		}
		if ev.Type != llm.EvText && ev.Type != llm.EvRefusal && ev.Type != llm.EvReasoning && ev.Type != llm.EvToolCall {
			// Held text goes out before anything else, so the sink sees the upstream's order.
			if err := r.flushHeld(); err != nil {
				return r.result(), err
			}
		}
		if err := r.event(&ev); err != nil {
			if ctx.Err() != nil {
				err = &llm.Error{Kind: llm.Canceled, Message: "client went away", Err: err}
			}
			return r.result(), err
		}
	}
}

type round struct {
	sink    Sink
	o       Options
	resp    *llm.Response
	choices []*choiceState
	usage   bool
	sent    bool      // some text went to the sink
	last    time.Time // when text last went to the sink
	// out is the event handed to the sink, reused: the sink may not keep it past the call,
	// and one per round costs one allocation instead of one per delta.
	out llm.Event
}

func (r *round) choice(i int) *choiceState {
	for len(r.choices) <= i {
		r.choices = append(r.choices, &choiceState{})
	}
	return r.choices[i]
}

func (r *round) event(ev *llm.Event) error {
	switch ev.Type {
	case llm.EvStart:
		if r.resp.ID == "" {
			r.resp.ID, r.resp.Model = ev.ID, ev.Model
		}
		return r.sink.Event(ev)
	case llm.EvText, llm.EvRefusal, llm.EvReasoning:
		return r.text(ev)
	case llm.EvToolCall:
		cs := r.choice(ev.Choice)
		for len(cs.calls) <= ev.Tool.Index {
			cs.calls = append(cs.calls, &call{})
		}
		c := cs.calls[ev.Tool.Index]
		if ev.Tool.ID != "" {
			c.id = ev.Tool.ID
		}
		if ev.Tool.Name != "" {
			c.name += ev.Tool.Name
		}
		c.args.WriteString(ev.Tool.Args)
		return nil
	case llm.EvItem:
		// Whole already; released in its place among the calls, at the end of the choice, so
		// it cannot overtake text the windows still hold.
		cs := r.choice(ev.Choice)
		for len(cs.calls) <= ev.Tool.Index {
			cs.calls = append(cs.calls, &call{})
		}
		c := cs.calls[ev.Tool.Index]
		c.item = append([]byte(nil), ev.Raw...)
		c.progress = nil
		for _, p := range ev.Progress {
			c.progress = append(c.progress, append(json.RawMessage(nil), p...))
		}
		return nil
	case llm.EvLogprobs:
		ch := r.resp.Choice(ev.Choice)
		ch.Logprobs = append(ch.Logprobs, ev.Raw)
		return r.sink.Event(ev)
	case llm.EvUsage:
		if ev.Usage != nil {
			r.resp.Usage = *ev.Usage
			r.usage = true
		}
		return r.sink.Event(ev)
	case llm.EvDone:
		return r.done(ev)
	}
	return nil
}

func kindOf(t llm.EventType) int {
	switch t {
	case llm.EvRefusal:
		return kRefusal
	case llm.EvReasoning:
		return kReasoning
	}
	return kText
}

func (r *round) text(ev *llm.Event) error {
	cs := r.choice(ev.Choice)
	if ev.Type == llm.EvReasoning && ev.Field != "" {
		cs.field = ev.Field
	}
	if ev.Type == llm.EvReasoning {
		cs.block.WriteString(ev.Text)
	}
	if ev.Type == llm.EvText && r.o.ThinkFilter {
		if cs.think == nil {
			cs.think = &thinkFilter{}
		}
		text, think := cs.think.split(ev.Text)
		if err := r.pass(llm.EvReasoning, ev.Choice, think, ""); err != nil {
			return err
		}
		if text != "" && !cs.think.in {
			if err := r.endReasoning(ev.Choice); err != nil {
				return err
			}
		}
		return r.pass(llm.EvText, ev.Choice, text, "")
	}
	if ev.Type != llm.EvReasoning && ev.Text != "" {
		if err := r.endReasoning(ev.Choice); err != nil {
			return err
		}
	}
	if ev.Type == llm.EvReasoning && ev.Encrypted != "" {
		// The opaque part (a signature, encrypted content) closes its reasoning block: what
		// the window still holds of the block's text goes out before it, so a sink that
		// rebuilds the block gets its text whole first.
		if err := r.pass(ev.Type, ev.Choice, ev.Text, ""); err != nil {
			return err
		}
		if err := r.endReasoning(ev.Choice); err != nil {
			return err
		}
		ch := r.resp.Choice(ev.Choice)
		ch.Opaque = append(ch.Opaque, llm.Reasoning{ID: ev.ID, Text: cs.block.String(), Encrypted: ev.Encrypted, Redacted: ev.Redacted})
		cs.block.Reset()
		r.out = llm.Event{Type: llm.EvReasoning, Choice: ev.Choice, Encrypted: ev.Encrypted, Redacted: ev.Redacted, ID: ev.ID, Field: cs.field}
		return r.sink.Event(&r.out)
	}
	return r.pass(ev.Type, ev.Choice, ev.Text, ev.Encrypted)
}

// endReasoning releases what the reasoning window of choice i still holds (its last,
// unfinished word) when the answer starts: reasoning ended there, and a sink must not get
// its tail after the answer, at the finish (a Responses stream would open a second
// reasoning item). The window starts afresh for any later reasoning.
func (r *round) endReasoning(i int) error {
	cs := r.choice(i)
	if !cs.reasoning {
		return nil
	}
	cs.reasoning = false
	if w := cs.win[kReasoning]; w != nil {
		if rest := w.Flush(); rest != "" {
			if err := r.release(llm.EvReasoning, i, rest, ""); err != nil {
				return err
			}
		}
	}
	return r.flushHeld() // coalesced reasoning goes out before the answer too
}

// pass runs text through the window of its choice and kind and releases what comes out.
func (r *round) pass(t llm.EventType, i int, text, enc string) error {
	if text == "" && enc == "" {
		return nil
	}
	out := text
	if t == llm.EvReasoning && text != "" {
		r.choice(i).reasoning = true
	}
	if r.o.NewWindow != nil && text != "" {
		cs := r.choice(i)
		k := kindOf(t)
		if cs.win[k] == nil {
			cs.win[k] = r.o.NewWindow()
		}
		out = cs.win[k].Write(text)
	}
	if out == "" && enc == "" {
		return nil
	}
	return r.release(t, i, out, enc)
}

// firstOut is the first capacity of a choice's released text.
const firstOut = 256

// release records released text on the response and hands it to the sink.
func (r *round) release(t llm.EventType, i int, text, enc string) error {
	out := &r.choice(i).out[kindOf(t)]
	if out.Cap() == 0 && text != "" {
		// An answer comes in many small pieces: one allocation of a typical answer's size,
		// not a doubling from 8 bytes on (six allocations for 200 bytes).
		out.Grow(max(firstOut, len(text)))
	}
	out.WriteString(text)
	r.resp.Choice(i)
	return r.send(t, i, text, enc)
}

// done ends choice i: what its windows still hold goes out, then its tool calls whole, then
// the finish reason.
func (r *round) done(ev *llm.Event) error {
	i, finish := ev.Choice, ev.Finish
	cs := r.choice(i)
	if cs.done {
		return nil
	}
	cs.done = true
	if cs.think != nil {
		text, think := cs.think.flush()
		if err := r.pass(llm.EvReasoning, i, think, ""); err != nil {
			return err
		}
		if err := r.pass(llm.EvText, i, text, ""); err != nil {
			return err
		}
	}
	for k, w := range cs.win {
		if w == nil {
			continue
		}
		if rest := w.Flush(); rest != "" {
			t := [nKinds]llm.EventType{llm.EvText, llm.EvRefusal, llm.EvReasoning}[k]
			if err := r.release(t, i, rest, ""); err != nil {
				return err
			}
		}
	}
	if err := r.flushHeld(); err != nil {
		return err
	}
	ch := r.resp.Choice(i)
	for idx, c := range cs.calls {
		if c.item != nil {
			item := string(c.item)
			if r.o.RedactJSON != nil {
				item = r.o.RedactJSON(item)
			}
			progress := c.progress
			if r.o.RedactJSON != nil {
				progress = make([]json.RawMessage, len(c.progress))
				for j, p := range c.progress {
					progress[j] = json.RawMessage(r.o.RedactJSON(string(p)))
				}
			}
			r.out = llm.Event{Type: llm.EvItem, Choice: i, Tool: llm.ToolDelta{Index: idx}, Raw: []byte(item), Progress: progress}
			if err := r.sink.Event(&r.out); err != nil {
				return err
			}
			continue
		}
		args := c.args.String()
		if r.o.RedactJSON != nil {
			args = r.o.RedactJSON(args)
		}
		ch.ToolCalls = append(ch.ToolCalls, llm.ToolCall{ID: c.id, Name: c.name, Arguments: args})
		r.out = llm.Event{Type: llm.EvToolCall, Choice: i, Tool: llm.ToolDelta{Index: idx, ID: c.id, Name: c.name, Args: args}}
		if err := r.sink.Event(&r.out); err != nil {
			return err
		}
	}
	ch.Finish, ch.Stop, ch.StopSequence = finish, ev.Stop, ev.StopSequence
	r.out = llm.Event{Type: llm.EvDone, Choice: i, Finish: finish, Stop: ev.Stop, StopSequence: ev.StopSequence}
	return r.sink.Event(&r.out)
}

// result fills the response's text from what was released.
func (r *round) result() *llm.Response {
	r.resp.Redactions = nil // recounted: result may be called more than once
	for i, cs := range r.choices {
		ch := r.resp.Choice(i)
		ch.Text, ch.Refusal, ch.Reasoning = cs.out[kText].String(), cs.out[kRefusal].String(), cs.out[kReasoning].String()
		ch.ReasoningField = cs.field
		for _, w := range cs.win {
			if w == nil {
				continue
			}
			for name, n := range w.Counts() {
				if r.resp.Redactions == nil {
					r.resp.Redactions = map[string]int{}
				}
				r.resp.Redactions[name] += n
			}
		}
	}
	return r.resp
}

// finish closes the round at a clean end of stream. The adapter guarantees every choice
// finished; usage is estimated when the provider never reported it.
func (r *round) finish() error {
	for i, cs := range r.choices {
		if !cs.done {
			if err := r.done(&llm.Event{Type: llm.EvDone, Choice: i, Finish: "stop"}); err != nil {
				return err
			}
		}
	}
	if !r.usage {
		r.resp.Usage = estimate(r.result())
	}
	return nil
}

// estimate guesses completion tokens at four bytes a token: the provider did not say, and an
// estimate marked as such beats a zero that looks real.
func estimate(resp *llm.Response) llm.Usage {
	n := 0
	for _, c := range resp.Choices {
		n += len(c.Text) + len(c.Refusal) + len(c.Reasoning)
		for _, tc := range c.ToolCalls {
			n += len(tc.Name) + len(tc.Arguments)
		}
	}
	out := (n + 3) / 4
	return llm.Usage{CompletionTokens: out, TotalTokens: out, Estimated: true}
}
