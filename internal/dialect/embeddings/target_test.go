package embeddings

import (
	"errors"
	"io"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// events is a stream of evs, then end.
type events struct {
	evs []llm.Event
	end error
}

func (s *events) Recv() (llm.Event, error) {
	if len(s.evs) == 0 {
		return llm.Event{}, s.end
	}
	ev := s.evs[0]
	s.evs = s.evs[1:]
	return ev, nil
}
func (s *events) Close() error { return nil }

func TestAnswer(t *testing.T) {
	body := []byte(`{"object":"list","data":[]}`)
	out, err := Answer(&events{evs: []llm.Event{{Type: llm.EvDone, Raw: body}}, end: io.EOF})
	if err != nil || string(out) != string(body) {
		t.Fatalf("Answer = %s, %v", out, err)
	}
	for name, st := range map[string]*events{
		"no event":        {end: errors.New("reset")},
		"a second event":  {evs: []llm.Event{{Raw: body}, {Raw: body}}, end: io.EOF},
		"a failed ending": {evs: []llm.Event{{Raw: body}}, end: errors.New("reset")},
	} {
		if _, err := Answer(st); llm.KindOf(err) != llm.Internal {
			t.Errorf("%s: %v, want an Internal error", name, err)
		}
	}
}
