package redisstore

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// breaker keeps a hung or dead Redis from costing every call its timeout (issue 19): once a
// call failed to reach Redis (a timeout, a connection error), Redis counts as down for this
// replica, and calls fail at once, until a background probe succeeds. The probe runs about
// once every interval, never two at a time, on the one goroutine the breaker owns; that
// goroutine also runs the work that waits for Redis to be back (after: the spool's flush).
// It starts when there is something to do and ends when there is nothing left, or at close,
// which stops and waits for it. Safe for concurrent use.
type breaker struct {
	every time.Duration
	// probe asks Redis whether it answers, bounded by its own timeout.
	probe func(ctx context.Context) error
	// after runs once Redis answers (and whenever kicked while it does): false when it
	// stopped at a failure, and must run again.
	after func(ctx context.Context) bool
	// changed is told when Redis goes down (true) and comes back (false).
	changed func(down bool)

	down atomic.Bool

	mu      sync.Mutex
	running bool // the goroutine is running
	again   bool // work came while it ran: it passes once more before ending
	closed  bool
	ctx     context.Context // the goroutine's: canceled at close
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func newBreaker(every time.Duration, probe func(context.Context) error, after func(context.Context) bool, changed func(bool)) *breaker {
	ctx, cancel := context.WithCancel(context.Background())
	return &breaker{every: every, probe: probe, after: after, changed: changed, ctx: ctx, cancel: cancel}
}

// isDown reports whether calls should fail at once.
func (b *breaker) isDown() bool { return b.down.Load() }

// trip counts Redis as down until a probe succeeds. Only the trip that opens the breaker
// kicks: while it is open, the goroutine is probing.
func (b *breaker) trip() {
	if b.down.CompareAndSwap(false, true) {
		b.changed(true)
		b.kick()
	}
}

// kick makes the goroutine run (again): to probe while down, then to run after.
func (b *breaker) kick() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.again = true
	if b.running || b.closed {
		return
	}
	b.running = true
	b.wg.Add(1)
	go b.run()
}

func (b *breaker) run() {
	defer b.wg.Done()
	for {
		b.mu.Lock()
		if !b.again || b.closed {
			b.running = false
			b.mu.Unlock()
			return
		}
		b.again = false
		b.mu.Unlock()
		if !b.pass() {
			return // closed: close does not wait for running
		}
	}
}

// pass probes until Redis answers, then runs after; false once closed.
func (b *breaker) pass() bool {
	for b.down.Load() {
		if !b.sleep() {
			return false
		}
		if b.probe(b.ctx) == nil && b.down.CompareAndSwap(true, false) {
			b.changed(false)
		}
	}
	if !b.after(b.ctx) {
		// Stopped at a failure that tripped the breaker (the next pass probes first), or at
		// one that did not: wait before trying again rather than spin.
		if !b.down.Load() && !b.sleep() {
			return false
		}
		b.mu.Lock()
		b.again = true
		b.mu.Unlock()
	}
	return true
}

func (b *breaker) sleep() bool {
	t := time.NewTimer(b.every)
	defer t.Stop()
	select {
	case <-b.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// close stops the goroutine and waits for it; later trips and kicks start nothing.
func (b *breaker) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.cancel()
	b.wg.Wait()
}
