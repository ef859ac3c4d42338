package cache

import (
	"context"
	"sync"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Record is one step of a leader's answer as its followers read it: the start (the served
// model and target), events as the leader's client got them, then the end (the complete
// response), a failure, or Over. A Record shared through a Board is JSON.
type Record struct {
	Start  bool        `json:"start,omitempty"`
	Model  string      `json:"model,omitempty"`
	Target string      `json:"target,omitempty"`
	Events []llm.Event `json:"events,omitempty"`
	// End is the complete response (its usage, the assembled body).
	End *llm.Response `json:"end,omitempty"`
	// Failed: the leader got no answer (an error, a refusal, its replica went away).
	Failed bool `json:"failed,omitempty"`
	// Over: the answer grew past the flight's bound; the rest is not shared.
	Over bool `json:"over,omitempty"`
}

func (r *Record) last() bool { return r.End != nil || r.Failed || r.Over }

// flight is one miss in progress on this replica, as a log its followers read from the
// start: the leader's (or, when the leader is on another replica, the pump's that copies
// it from the Board). The log ends with its last record; it is read after its flight left
// the map too. Safe for concurrent use.
type flight struct {
	mu   sync.Mutex
	recs []Record
	wake chan struct{} // closed and replaced at each append
	done bool
}

func newFlight() *flight { return &flight{wake: make(chan struct{})} }

// add appends rs, unless the log ended; the first record that ends it ends it.
func (f *flight) add(rs ...Record) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range rs {
		if f.done {
			break
		}
		f.recs = append(f.recs, r)
		f.done = r.last()
	}
	close(f.wake)
	f.wake = make(chan struct{})
}

// read returns the records from i on, waiting until there is one or ctx ends.
func (f *flight) read(ctx context.Context, i int) ([]Record, error) {
	for {
		f.mu.Lock()
		recs, wake := f.recs[i:], f.wake
		f.mu.Unlock()
		if len(recs) > 0 {
			return recs, nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// flights are the misses in progress on this replica, by key. The zero value is ready.
type flights struct {
	mu      sync.Mutex
	m       map[string]*flight
	waiting int
}

// Lead is a leader's hold on its key: it writes the key's flight; End or Fail must be
// called once, whatever happens.
type Lead struct {
	c   *Cache
	key string
	f   *flight
	// started: the start record is written (a live leader writes it at its first Open).
	started bool
	size    int
	max     int
}

// Flight is an identical request's miss in progress, to follow.
type Flight struct{ f *flight }

// Outcome is what a follower got.
type Outcome uint8

const (
	// Shared: the leader's answer is the request's.
	Shared Outcome = iota + 1
	// Alone: the leader's answer cannot be shared (it grew past the bound): the request
	// calls the provider on its own, without coalescing.
	Alone
	// Again: the leader got no answer; the request joins again (one follower leads then).
	Again
)

// Join makes the request with key the leader of its key's flight (a Lead, which must be
// ended), or returns the flight in progress to follow. With a Board, the first request of
// a key on this replica claims the key for every replica: it leads, or it follows the
// leader on another replica through a pump (and the requests after it follow it here); a
// Board that fails is no coalescing across replicas, never an error.
func (c *Cache) Join(ctx context.Context, key string, max int) (*Lead, *Flight) {
	fs := &c.flights
	fs.mu.Lock()
	if fs.m == nil {
		fs.m, c.pumps = map[string]*flight{}, make(chan struct{}, maxPumps)
	}
	if f := fs.m[key]; f != nil {
		fs.mu.Unlock()
		return nil, &Flight{f: f}
	}
	f := newFlight()
	fs.m[key] = f
	fs.mu.Unlock()
	l := &Lead{c: c, key: key, f: f, max: max}
	if c.Board == nil {
		return l, nil
	}
	if remote := c.claim(ctx, l); remote != "" {
		go c.pump(key, remote, f)
		return nil, &Flight{f: f}
	}
	return l, nil
}

// drop takes f out of the map, if it is still key's flight.
func (c *Cache) drop(key string, f *flight) {
	fs := &c.flights
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.m[key] == f {
		delete(fs.m, key)
	}
}

// start writes the start record once: model and target serve the answer.
func (l *Lead) start(model, target string) {
	if !l.started {
		l.started = true
		l.f.add(Record{Start: true, Model: model, Target: target})
	}
}

// event writes one event the leader's client got, until the answer passes the bound (then
// Over: the followers that did not start go alone).
func (l *Lead) event(ev *llm.Event) {
	if l.max < 0 {
		return
	}
	l.size += eventSize(ev)
	if l.max > 0 && l.size > l.max {
		l.max = -1
		l.f.add(Record{Over: true})
		return
	}
	l.f.add(Record{Events: []llm.Event{copyEvent(ev)}})
}

// End ends the lead with the complete response; the events the followers have not had
// (a leader that was not live) come with it, from rec. Only the first End or Fail counts.
func (l *Lead) End(model, target string, rec *Recorder, resp *llm.Response) {
	if !l.started {
		l.start(model, target)
		if rec == nil || rec.Over() {
			l.f.add(Record{Over: true})
		} else {
			for i := range rec.evs {
				l.event(&rec.evs[i])
			}
		}
	}
	r := given(resp)
	l.f.add(Record{End: &r})
	l.c.drop(l.key, l.f)
}

// Fail ends the lead as failed: a follower that has not started takes over.
func (l *Lead) Fail() {
	l.f.add(Record{Failed: true})
	l.c.drop(l.key, l.f)
}

// given is resp as it is given again: without what was this request's alone.
func given(resp *llm.Response) llm.Response {
	r := *resp
	r.Attempts, r.Redactions, r.FirstEvent, r.FirstText = nil, nil, 0, 0
	return r
}

// Follower is the client's side of a request that follows a flight.
type Follower interface {
	// Open starts the answer on the client's wire once the leader's starts, for a follower
	// that streams it as it comes; an error means the client left.
	Open(model, target string) (Sink, error)
}

// Follow reads fl for a follower until the leader's answer ends: Shared with the entry,
// Alone, or Again. With open non-nil the answer's events go to the sink it returns as they
// come (started then reports it opened); else nothing is written. A follower whose ctx
// ends stops and returns ctx's cause; the others are not disturbed. An error after the
// start is ErrShared (the leader failed midstream) or the client's.
func (c *Cache) Follow(ctx context.Context, fl *Flight, open Follower) (out Outcome, e *Entry, started bool, err error) {
	fs := &c.flights
	fs.mu.Lock()
	fs.waiting++
	fs.mu.Unlock()
	defer func() {
		fs.mu.Lock()
		fs.waiting--
		fs.mu.Unlock()
	}()
	e = &Entry{Stored: c.now()}
	var sk Sink
	for i := 0; ; {
		recs, err := fl.f.read(ctx, i)
		if err != nil {
			return 0, nil, sk != nil, err
		}
		i += len(recs)
		for _, r := range recs {
			switch {
			case r.Start:
				e.Model, e.Target = r.Model, r.Target
				if open != nil {
					if sk, err = open.Open(r.Model, r.Target); err != nil {
						return 0, nil, true, err
					}
				}
			case r.End != nil:
				e.Response = *r.End
				return Shared, e, sk != nil, nil
			case r.Failed, r.Over:
				if sk != nil {
					return 0, nil, true, ErrShared
				}
				if r.Over {
					return Alone, nil, false, nil
				}
				return Again, nil, false, nil
			}
			for j := range r.Events {
				e.Events = append(e.Events, r.Events[j])
				if sk != nil {
					if err := sk.Event(&r.Events[j]); err != nil {
						return 0, nil, true, err
					}
				}
			}
		}
	}
}

// ErrShared is the failure of a followed answer after it started on the follower's wire:
// the leader's round failed midstream.
var ErrShared error = &llm.Error{Kind: llm.Unavailable, Code: "upstream_error", Type: "server_error",
	Message: "The answer this request shared with an identical one failed midstream. Retry."}

// Waiting is the number of followers waiting for a leader now, for tests and metrics.
func (c *Cache) Waiting() int {
	c.flights.mu.Lock()
	defer c.flights.mu.Unlock()
	return c.flights.waiting
}

// len is the number of records written, for tests.
func (f *flight) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.recs)
}
