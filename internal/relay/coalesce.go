package relay

import (
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Coalesce merges tiny deltas before the wire: released text of one choice and kind is held
// until Events deltas gathered or Interval passed since the last delta went out, whichever
// comes first. The first text of a round always goes out at once, and whatever is held goes
// out before any other event and at the end of its choice. The relay owns no timer: held text
// waits at most until the next upstream event (the idle timeout bounds that gap), so an
// interval is a floor between sends, not a clock. The zero value is off.
type Coalesce struct {
	Events   int
	Interval time.Duration
}

func (c Coalesce) on() bool { return c.Events > 1 || c.Interval > 0 }

// held is what coalescing keeps back for one choice and kind.
type held struct {
	text strings.Builder
	n    int
}

// send hands released text to the sink, or holds it when coalescing says so.
func (r *round) send(t llm.EventType, i int, text, enc string) error {
	c := r.o.Coalesce
	if !c.on() || enc != "" || !r.sent {
		if err := r.flushHeld(); err != nil {
			return err
		}
		return r.emit(t, i, text, enc)
	}
	h := &r.choice(i).held[kindOf(t)]
	h.text.WriteString(text)
	h.n++
	if (c.Events > 1 && h.n >= c.Events) || (c.Interval > 0 && r.now().Sub(r.last) >= c.Interval) {
		return r.flushHeld()
	}
	return nil
}

// flushHeld sends everything coalescing holds, choice by choice, in kind order.
func (r *round) flushHeld() error {
	if !r.o.Coalesce.on() {
		return nil
	}
	for i, cs := range r.choices {
		for k := range cs.held {
			h := &cs.held[k]
			if h.n == 0 {
				continue
			}
			text := h.text.String()
			h.text.Reset()
			h.n = 0
			if err := r.emit([nKinds]llm.EventType{llm.EvText, llm.EvRefusal, llm.EvReasoning}[k], i, text, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *round) emit(t llm.EventType, i int, text, enc string) error {
	if text != "" {
		if !r.sent && !r.o.Start.IsZero() {
			r.resp.FirstText = r.now().Sub(r.o.Start)
		}
		r.sent = true
		if r.o.Coalesce.Interval > 0 {
			r.last = r.now() // the clock is read per delta only when an interval needs it
		}
	}
	r.out = llm.Event{Type: t, Choice: i, Text: text, Encrypted: enc, Field: r.choice(i).field}
	return r.sink.Event(&r.out)
}

func (r *round) now() time.Time {
	if r.o.Now != nil {
		return r.o.Now()
	}
	return time.Now()
}
