package transport

import (
	"io"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Source is an adapter's stream as its Queue reads it. Fill and End are for the Queue only.
type Source interface {
	// Fill reads one upstream event and pushes its llm events on the stream's Queue, or
	// returns the error that ends the stream: io.EOF when the answer is complete.
	Fill() error
	// End runs once, with the error Fill ended the stream with: at once for a failure (the
	// stream closes its body), and for io.EOF only once every queued event is out (the
	// stream drains its body, which keeps the connection; a slow closing chunk must not
	// hold back the finish).
	End(err error)
}

// Queue holds the llm events one upstream event produced and hands them out one per Recv:
// one upstream event (a chunk with several choices, a block that starts with text) may carry
// several. The zero Queue is empty. Not safe for concurrent use.
type Queue struct {
	events []llm.Event // events[i:] not yet returned
	i      int
	err    error // sticky: what Fill ended the stream with
	ended  bool  // End ran
}

// Push queues ev.
func (q *Queue) Push(ev llm.Event) { q.events = append(q.events, ev) }

// Recv returns the next queued event, filling the queue from s when it is empty. Once Fill
// returned an error, Recv returns the events still queued, then that error, on every later
// call too.
func (q *Queue) Recv(s Source) (llm.Event, error) {
	for {
		if q.i < len(q.events) {
			ev := q.events[q.i]
			q.events[q.i] = llm.Event{} // drop references held by the queue
			q.i++
			return ev, nil
		}
		if q.err != nil {
			if !q.ended {
				q.ended = true
				s.End(q.err)
			}
			return llm.Event{}, q.err
		}
		q.events, q.i = q.events[:0], 0
		if err := s.Fill(); err != nil {
			q.err = err
			if err != io.EOF {
				q.ended = true
				s.End(err)
			}
		}
	}
}
