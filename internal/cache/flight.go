package cache

import (
	"context"
	"sync"
)

// flights coalesces identical misses in this process: while one request (the leader) is
// answered by a provider, requests with the same key (followers) wait for its answer
// instead of calling the provider too. Followers on other replicas do not see it
// (cross-replica coalescing is not built). The zero value is ready; safe for concurrent use.
type flights struct {
	mu      sync.Mutex
	m       map[string]*flight
	waiting int
}

// flight is one leader's miss in progress. done is closed once, by the leader's End.
type flight struct {
	done chan struct{}
	e    *Entry // the answer, when it could be shared
	// failed: the leader got no answer (an error, its client left): a follower takes over.
	// Else e == nil means the answer was complete but not one to give again.
	failed bool
}

// Lead is a leader's hold on its key: End must be called once, whatever happens.
type Lead struct {
	c   *Cache
	key string
	f   *flight
}

// Flight is an identical request's miss in progress, to wait for.
type Flight struct{ f *flight }

// Outcome is what a follower got.
type Outcome uint8

const (
	// Shared: the leader's answer is the request's.
	Shared Outcome = iota + 1
	// Alone: the leader's answer cannot be given again (too large, refused, cut at
	// max_tokens): the request calls the provider on its own, without coalescing.
	Alone
	// Again: the leader got no answer; the request joins again (one follower leads then).
	Again
)

// Join makes the request with key the leader of its key's flight (a Lead, which must be
// ended), or returns the flight in progress to wait for.
func (c *Cache) Join(key string) (*Lead, *Flight) {
	fs := &c.flights
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.m == nil {
		fs.m = map[string]*flight{}
	}
	if f := fs.m[key]; f != nil {
		return nil, &Flight{f: f}
	}
	f := &flight{done: make(chan struct{})}
	fs.m[key] = f
	return &Lead{c: c, key: key, f: f}, nil
}

// Wait waits for the flight's leader and returns the shared answer, Alone, or Again. A
// follower whose ctx ends stops waiting and returns ctx's cause; the others are not
// disturbed.
func (c *Cache) Wait(ctx context.Context, fl *Flight) (Outcome, *Entry, error) {
	fs := &c.flights
	fs.mu.Lock()
	fs.waiting++
	fs.mu.Unlock()
	defer func() {
		fs.mu.Lock()
		fs.waiting--
		fs.mu.Unlock()
	}()
	f := fl.f
	select {
	case <-f.done:
	case <-ctx.Done():
		return 0, nil, context.Cause(ctx)
	}
	switch {
	case f.e != nil:
		return Shared, f.e, nil
	case f.failed:
		return Again, nil, nil
	}
	return Alone, nil, nil
}

// End ends the lead with the answer to share (nil: none could be given again), or as
// failed; the followers go on. Only the first call counts.
func (l *Lead) End(e *Entry, failed bool) {
	fs := &l.c.flights
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.m[l.key] != l.f {
		return
	}
	delete(fs.m, l.key)
	l.f.e, l.f.failed = e, failed && e == nil
	close(l.f.done)
}

// Waiting is the number of followers waiting for a leader now, for tests and metrics.
func (c *Cache) Waiting() int {
	c.flights.mu.Lock()
	defer c.flights.mu.Unlock()
	return c.flights.waiting
}
