package cache

import (
	"encoding/json"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Entry is a cached answer: what the client's sink received in the round (text in the
// pieces the relay released, whole tool calls, the finish, usage), to be replayed into any
// wire's sink, and the complete response, for the assembled body and the usage.
type Entry struct {
	// Model is the served model name the wire shows; Target the served target.
	Model, Target string
	Events        []llm.Event
	Response      llm.Response
	// Stored is when the answer was stored (the Age header).
	Stored time.Time
}

// Replay hands the entry's events to sink, in order, and stops at its first error.
func (e *Entry) Replay(sink interface{ Event(*llm.Event) error }) error {
	for i := range e.Events {
		if err := sink.Event(&e.Events[i]); err != nil {
			return err
		}
	}
	return nil
}

// Age is how long ago the entry was stored, in whole seconds (RFC 9111 §5.1), never negative.
func (e *Entry) Age(now time.Time) int64 {
	if d := now.Sub(e.Stored); d > 0 {
		return int64(d / time.Second)
	}
	return 0
}

// storable reports whether resp is an answer to give again: complete, not refused (by the
// model or its content filter) and not cut at max_tokens. Errors, cut streams and guardrail
// refusals never reach here: only a round that succeeded is offered.
func storable(resp *llm.Response) bool {
	if resp == nil || len(resp.Choices) == 0 {
		return false
	}
	for _, ch := range resp.Choices {
		if ch.Refusal != "" || ch.Finish == "length" || ch.Finish == "content_filter" || ch.Finish == "" {
			return false
		}
	}
	return true
}

// encode is the stored form of e; decode reads it back. JSON: the llm types have exported
// fields only, and an entry from another build that does not decode is a miss.
func encode(e *Entry) ([]byte, error) { return json.Marshal(e) }

func decode(b []byte) (*Entry, error) {
	e := &Entry{}
	if err := json.Unmarshal(b, e); err != nil {
		return nil, err
	}
	return e, nil
}

// Recorder is the sink of a round that may be stored: it passes every event on to the
// client's sink and keeps a copy, until the copies pass max bytes (then it only passes
// on). The zero value is not ready: use NewRecorder. Not safe for concurrent use.
type Recorder struct {
	next Sink
	max  int
	size int
	over bool
	evs  []llm.Event
}

// Sink is relay.Sink's method set.
type Sink = interface{ Event(*llm.Event) error }

// NewRecorder records what goes to next, up to max bytes of text (0: no bound).
func NewRecorder(next Sink, max int) *Recorder { return &Recorder{next: next, max: max} }

// Event implements Sink: the event is only valid during the call, so what it points to is
// copied.
func (r *Recorder) Event(ev *llm.Event) error {
	if err := r.next.Event(ev); err != nil {
		return err
	}
	if r.over {
		return nil
	}
	e := copyEvent(ev)
	r.size += eventSize(&e)
	if r.max > 0 && r.size > r.max {
		r.over, r.evs = true, nil // too large to store: keep nothing
		return nil
	}
	r.evs = append(r.evs, e)
	return nil
}

// Over reports whether the round grew past the recorder's bound.
func (r *Recorder) Over() bool { return r.over }

// copyEvent is ev with its own copy of what it points to: an event is only valid during
// the sink's call.
func copyEvent(ev *llm.Event) llm.Event {
	e := *ev
	if ev.Raw != nil {
		e.Raw = append(json.RawMessage(nil), ev.Raw...)
	}
	if ev.Usage != nil {
		u := *ev.Usage
		e.Usage = &u
	}
	return e
}

// eventSize is about the bytes ev takes, for the bounds of an entry and of a flight.
func eventSize(ev *llm.Event) int {
	return len(ev.Text) + len(ev.Encrypted) + len(ev.Tool.Args) + len(ev.Raw) + 64
}
