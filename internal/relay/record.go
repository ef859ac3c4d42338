package relay

import (
	"encoding/json"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Recorder is the Sink of a held round (an output guardrail in mode hold): it keeps every
// released event, to replay into the client's sink once the round passed its verdict, and
// to drop otherwise. The zero value is ready. Not safe for concurrent use.
type Recorder struct{ evs []llm.Event }

// Event implements Sink.
func (r *Recorder) Event(ev *llm.Event) error {
	e := *ev // the event is only valid during the call: copy what it points to
	if ev.Raw != nil {
		e.Raw = append(json.RawMessage(nil), ev.Raw...)
	}
	if ev.Usage != nil {
		u := *ev.Usage
		e.Usage = &u
	}
	r.evs = append(r.evs, e)
	return nil
}

// Replay hands the recorded events to sink, in order, and stops at its first error.
func (r *Recorder) Replay(sink Sink) error {
	for i := range r.evs {
		if err := sink.Event(&r.evs[i]); err != nil {
			return err
		}
	}
	return nil
}
