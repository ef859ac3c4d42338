package redisstore

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// fakeRedis answers the breaker's probes: down until up is set; a probe in flight blocks
// until release is closed, when hold is set.
type fakeRedis struct {
	up             atomic.Bool
	probes, afters atomic.Int64
	inFlight, most atomic.Int64
	hold           chan struct{}
	mu             sync.Mutex
	moves          []bool
}

func (f *fakeRedis) probe(ctx context.Context) error {
	f.probes.Add(1)
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for m := f.most.Load(); n > m && !f.most.CompareAndSwap(m, n); m = f.most.Load() {
	}
	if f.hold != nil {
		select {
		case <-f.hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if !f.up.Load() {
		return errors.New("connection refused")
	}
	return nil
}

func (f *fakeRedis) after(context.Context) bool { f.afters.Add(1); return true }

func (f *fakeRedis) changed(down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.moves = append(f.moves, down)
}

// Once tripped, the breaker probes once a second, one probe at a time however often it is
// tripped again, closes at the first probe that succeeds, runs after once, and ends its
// goroutine: synctest fails a test that leaves one behind.
func TestBreakerProbesOncePerInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeRedis{}
		b := newBreaker(time.Second, f.probe, f.after, f.changed)
		defer b.close()
		b.trip()
		if !b.isDown() {
			t.Fatal("got the breaker closed after a trip, want it open")
		}
		for range 10 { // calls that failed meanwhile trip it again: nothing more starts
			b.trip()
		}
		synctest.Wait()
		if n := f.probes.Load(); n != 0 {
			t.Errorf("got %d probes at once, want the first a second after the trip", n)
		}
		time.Sleep(3*time.Second + time.Millisecond)
		synctest.Wait()
		if n := f.probes.Load(); n != 3 {
			t.Errorf("got %d probes in 3s, want 3", n)
		}
		f.up.Store(true)
		time.Sleep(time.Second)
		synctest.Wait()
		if b.isDown() || f.probes.Load() != 4 || f.afters.Load() != 1 {
			t.Errorf("got down %v after %d probes and %d afters, want closed after 4 probes and 1 after",
				b.isDown(), f.probes.Load(), f.afters.Load())
		}
		b.mu.Lock()
		running := b.running
		b.mu.Unlock()
		if running {
			t.Error("got the goroutine running once Redis is back and nothing is left, want it ended")
		}
		if len(f.moves) != 2 || !f.moves[0] || f.moves[1] {
			t.Errorf("got moves %v, want [true false]: one down, one back", f.moves)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if n := f.probes.Load(); n != 4 {
			t.Errorf("got %d probes while closed, want none more", n)
		}
	})
}

// A probe that hangs (a stopped Redis) is never joined by a second one; close cancels it and
// waits for the goroutine.
func TestBreakerOneProbeInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeRedis{hold: make(chan struct{})}
		b := newBreaker(time.Second, f.probe, f.after, f.changed)
		b.trip()
		time.Sleep(time.Second)
		synctest.Wait()
		for range 5 {
			b.trip()
			b.kick()
			time.Sleep(time.Second)
		}
		synctest.Wait()
		if f.probes.Load() != 1 || f.most.Load() != 1 {
			t.Errorf("got %d probes, %d at most at once, want the one that hangs alone", f.probes.Load(), f.most.Load())
		}
		b.close()
		if f.inFlight.Load() != 0 {
			t.Error("got a probe in flight after close, want close to wait for it")
		}
		b.trip() // after close: nothing starts
		synctest.Wait()
		if f.probes.Load() != 1 {
			t.Errorf("got %d probes after close, want none more", f.probes.Load())
		}
	})
}

// Work kicked while the goroutine ends its pass is not stranded: it passes once more.
func TestBreakerKickWhileRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var runs atomic.Int64
		var b *breaker
		b = newBreaker(time.Second, func(context.Context) error { return nil }, func(context.Context) bool {
			if runs.Add(1) == 1 {
				b.kick() // a record spooled while the drain runs
			}
			return true
		}, func(bool) {})
		defer b.close()
		b.kick()
		synctest.Wait()
		if n := runs.Load(); n != 2 {
			t.Errorf("got %d drains, want 2", n)
		}
	})
}

// The spool keeps writes oldest first up to its bound and refuses the rest.
func TestSpoolBoundAndOrder(t *testing.T) {
	p := spool{max: 3}
	for i := range 5 {
		if ok := p.push(write{args: []any{i}}); ok != (i < 3) {
			t.Errorf("push %d: got %v, want %v", i, ok, i < 3)
		}
	}
	if p.len() != 3 {
		t.Fatalf("got %d kept, want 3", p.len())
	}
	for i := range 3 {
		w, ok := p.peek()
		if !ok || w.args[0] != i {
			t.Fatalf("peek %d: got %v %v, want the oldest (%d)", i, w.args, ok, i)
		}
		p.pop()
	}
	if _, ok := p.peek(); ok || p.q != nil {
		t.Errorf("got %d left, want none (and the backing array released)", len(p.q))
	}
	if !p.push(write{args: []any{9}}) {
		t.Error("got a push refused after the spool emptied, want room again")
	}
}
