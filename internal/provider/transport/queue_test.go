package transport

import (
	"io"
	"slices"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// script is a Source whose every Fill pushes one batch of texts; the Fill of the last batch
// returns err.
type script struct {
	q       Queue
	batches [][]string
	err     error
	fills   int
	ends    []error
	// queued is how many events were still queued each time End ran.
	queued []int
}

func (s *script) Fill() error {
	s.fills++
	if len(s.batches) == 0 {
		return s.err
	}
	for _, t := range s.batches[0] {
		s.q.Push(llm.Event{Type: llm.EvText, Text: t})
	}
	s.batches = s.batches[1:]
	if len(s.batches) == 0 {
		// The last upstream event ends the stream with its own events queued, as a terminal
		// event or message_stop does (io.EOF), or a chunk that fails half-way (a failure).
		return s.err
	}
	return nil
}

func (s *script) End(err error) {
	s.ends = append(s.ends, err)
	s.queued = append(s.queued, len(s.q.events)-s.q.i)
}

func drain(t *testing.T, s *script) (texts []string, err error) {
	t.Helper()
	for range 100 {
		ev, err := s.q.Recv(s)
		if err != nil {
			return texts, err
		}
		texts = append(texts, ev.Text)
	}
	t.Fatal("Recv never ended")
	return nil, nil
}

func TestQueueComplete(t *testing.T) {
	s := &script{batches: [][]string{{"a", "b"}, {}, {"c"}}, err: io.EOF}
	texts, err := drain(t, s)
	if err != io.EOF || !slices.Equal(texts, []string{"a", "b", "c"}) {
		t.Fatalf("got %q, %v; want a b c and io.EOF", texts, err)
	}
	// The drain that keeps the connection comes once the last event is out, not before.
	if !slices.Equal(s.ends, []error{io.EOF}) || s.queued[0] != 0 {
		t.Errorf("End ran %v with %v queued, want once with io.EOF and nothing queued", s.ends, s.queued)
	}
	fills := s.fills
	for range 3 {
		if _, err := s.q.Recv(s); err != io.EOF {
			t.Fatalf("later Recv: %v, want io.EOF again", err)
		}
	}
	if s.fills != fills || len(s.ends) != 1 {
		t.Errorf("after the end: %d fills and %d ends, want %d and 1", s.fills, len(s.ends), fills)
	}
}

func TestQueueFailure(t *testing.T) {
	cut := &llm.Error{Kind: llm.Truncated, Message: "cut"}
	s := &script{batches: [][]string{{"a"}, {"b", "c"}}, err: cut}
	ev, err := s.q.Recv(s)
	if err != nil || ev.Text != "a" {
		t.Fatalf("first Recv: %q, %v", ev.Text, err)
	}
	ev, err = s.q.Recv(s)
	if err != nil || ev.Text != "b" {
		t.Fatalf("second Recv: %q, %v", ev.Text, err)
	}
	// A failure closes the body at once, even with events still queued.
	if len(s.ends) != 1 || s.ends[0] != cut || s.queued[0] != 2 {
		t.Fatalf("End ran %v with %v queued, want once with the failure and b, c queued", s.ends, s.queued)
	}
	texts, err := drain(t, s)
	if err != cut || !slices.Equal(texts, []string{"c"}) {
		t.Fatalf("got %q, %v; want c, then the failure", texts, err)
	}
	if _, err := s.q.Recv(s); err != cut || len(s.ends) != 1 {
		t.Errorf("later Recv: %v with %d ends, want the same failure and End once", err, len(s.ends))
	}
}

// TestQueueDropsReferences: a returned event is not kept by the queue (a long stream must
// not pin every delta until the next Fill).
func TestQueueDropsReferences(t *testing.T) {
	s := &script{batches: [][]string{{"a", "b"}}, err: io.EOF}
	if _, err := s.q.Recv(s); err != nil {
		t.Fatal(err)
	}
	if s.q.events[0].Text != "" {
		t.Errorf("the queue still holds %q after returning it", s.q.events[0].Text)
	}
}
