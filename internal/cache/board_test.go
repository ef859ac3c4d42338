package cache

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// memBoard is a Board in memory, on the bubble's clock: locks with a lease, logs that a
// reader waits on.
type memBoard struct {
	mu    sync.Mutex
	locks map[string]memLock
	logs  map[string][][]byte
	wake  chan struct{}
}

type memLock struct {
	token   string
	expires time.Time
}

func newMemBoard() *memBoard {
	return &memBoard{locks: map[string]memLock{}, logs: map[string][][]byte{}, wake: make(chan struct{})}
}

func (b *memBoard) holder(lock string) string {
	if l, ok := b.locks[lock]; ok && time.Now().Before(l.expires) {
		return l.token
	}
	return ""
}

func (b *memBoard) Claim(_ context.Context, lock, token string, lease time.Duration) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if h := b.holder(lock); h != "" {
		return h, nil
	}
	b.locks[lock] = memLock{token, time.Now().Add(lease)}
	return token, nil
}

func (b *memBoard) Renew(_ context.Context, lock, token string, lease time.Duration) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.holder(lock) != token {
		return false, nil
	}
	b.locks[lock] = memLock{token, time.Now().Add(lease)}
	return true, nil
}

func (b *memBoard) Release(_ context.Context, lock, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.holder(lock) == token {
		delete(b.locks, lock)
	}
	return nil
}

func (b *memBoard) Holder(_ context.Context, lock string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.holder(lock), nil
}

func (b *memBoard) Append(_ context.Context, log string, entry []byte, _ time.Duration) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.logs[log] = append(b.logs[log], entry)
	close(b.wake)
	b.wake = make(chan struct{})
	return nil
}

func (b *memBoard) Read(ctx context.Context, log, after string, block time.Duration) ([][]byte, string, error) {
	i, _ := strconv.Atoi(after)
	deadline := time.After(block)
	for {
		b.mu.Lock()
		es, wake := b.logs[log], b.wake
		b.mu.Unlock()
		if len(es) > i {
			return es[i:], strconv.Itoa(len(es)), nil
		}
		if block <= 0 {
			return nil, after, nil
		}
		select {
		case <-wake:
		case <-deadline:
			return nil, after, nil
		case <-ctx.Done():
			return nil, after, ctx.Err()
		}
	}
}

// A leader on another replica whose lease lapses (its replica died) hands its key over:
// the follower here becomes the leader once the lock is gone, after one lease at most.
func TestLeaseLapses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newMemBoard()
		c := &Cache{Store: &Memory{}, Board: b, Lease: 3 * time.Second}
		ctx := context.Background()
		if h, _ := b.Claim(ctx, lockName("k"), "dead", c.Lease); h != "dead" {
			t.Fatal("the dead replica's claim failed")
		}
		start := time.Now()
		lead, fl := c.Join(ctx, "k", 0)
		if lead != nil {
			t.Fatal("got the lead while another replica holds the key, want to follow it")
		}
		out, _, _, err := c.Follow(ctx, fl, nil)
		if out != Again || err != nil {
			t.Fatalf("got %v, %v, want Again once the lease lapsed", out, err)
		}
		if d := time.Since(start); d < c.Lease || d > 2*c.Lease {
			t.Errorf("handed over after %v, want after the lease (%v)", d, c.Lease)
		}
		if lead, _ = c.Join(ctx, "k", 0); lead == nil {
			t.Fatal("after the lapse, want this replica to lead")
		}
		// Its answer reaches a follower on another replica through the board.
		other := &Cache{Store: &Memory{}, Board: b, Lease: 3 * time.Second}
		_, fl = other.Join(ctx, "k", 0)
		if fl == nil {
			t.Fatal("the other replica must follow")
		}
		lead.End("m", "p/m", recorded(t, 0, "hel", "lo"), answer("stop", ""))
		out, e, _, err := other.Follow(ctx, fl, nil)
		if out != Shared || err != nil || len(e.Events) != 3 || e.Response.Usage.TotalTokens != 5 {
			t.Fatalf("got %v %+v %v, want the leader's answer", out, e, err)
		}
		synctest.Wait()
		if h, _ := b.Holder(ctx, lockName("k")); h != "" {
			t.Errorf("got the lock held by %q after the answer, want it released", h)
		}
	})
}
