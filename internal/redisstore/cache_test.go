package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/cache"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/redisstore"
)

var _ cache.Store = (*redisstore.Cache)(nil)

// Entries are shared by every store on one Redis, expire with their TTL, and a Redis that
// is down answers an llm.Unavailable error at once (the cache's miss), not a wait.
func TestCacheStore(t *testing.T) {
	forms(t, func(t *testing.T, srv backend) {
		sa := store(t, srv, redisstore.Options{FailOpen: true}, nil)
		a := sa.Cache()
		b := store(t, srv, redisstore.Options{FailOpen: true}, nil).Cache()
		ctx := context.Background()
		if v, err := a.Get(ctx, "k"); v != nil || err != nil {
			t.Fatalf("got %q, %v before any Set, want nil, nil", v, err)
		}
		if err := a.Set(ctx, "k", []byte("answer"), 200*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if v, err := b.Get(ctx, "k"); string(v) != "answer" || err != nil {
			t.Fatalf("other store: got %q, %v, want answer", v, err)
		}
		// Redis's own clock expires the entry: poll the state, not a fixed sleep.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			v, err := b.Get(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			if v == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("got the entry 5s after its 200ms TTL, want it expired")
			}
		}
		// Clear by prefix: one alias's entries, then all.
		for _, k := range []string{"sluice:cache:a:{1}", "sluice:cache:a:{2}", "sluice:cache:a%3Ab:{3}", "sluice:cache:b:{4}"} {
			if err := a.Set(ctx, k, []byte("x"), time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := b.Clear(ctx, "sluice:cache:a:"); n != 2 || err != nil {
			t.Errorf("Clear of alias a: got %d, %v, want 2", n, err)
		}
		if v, _ := a.Get(ctx, "sluice:cache:a%3Ab:{3}"); v == nil {
			t.Error("Clear of alias a deleted alias a:b's entry")
		}
		if n, err := b.Clear(ctx, "sluice:cache:"); n != 2 || err != nil {
			t.Errorf("Clear of all: got %d, %v, want 2", n, err)
		}
		if !stop(t, srv) {
			return
		}
		for range 5 {
			if _, err := a.Get(ctx, "k"); llm.KindOf(err) != llm.Unavailable {
				t.Fatalf("Redis down: got %v, want an Unavailable error", err)
			}
		}
		if _, err := a.Clear(ctx, "sluice:cache:"); llm.KindOf(err) != llm.Unavailable {
			t.Errorf("Redis down: Clear got %v, want an Unavailable error", err)
		}
		if n := sa.Waited(); n > 1 {
			t.Errorf("Redis down: %d reads waited for the timeout, want at most the first (the breaker)", n)
		}
	})
}

var _ cache.Board = (*redisstore.Cache)(nil)

// The flights' board: one holder per lock until it releases it or its lease lapses; a log
// that one store appends to and another reads, waiting for the next entry; Redis down is an
// Unavailable error at once (no coalescing across replicas), not a wait.
func TestCacheBoard(t *testing.T) {
	forms(t, func(t *testing.T, srv backend) {
		sa := store(t, srv, redisstore.Options{FailOpen: true}, nil)
		a, b := sa.Cache(), store(t, srv, redisstore.Options{FailOpen: true}, nil).Cache()
		ctx := context.Background()
		if h, err := a.Claim(ctx, "lock", "one", time.Minute); h != "one" || err != nil {
			t.Fatalf("first claim: got %q, %v, want one", h, err)
		}
		if h, err := b.Claim(ctx, "lock", "two", time.Minute); h != "one" || err != nil {
			t.Fatalf("second claim: got %q, %v, want the holder one", h, err)
		}
		if ok, err := b.Renew(ctx, "lock", "two", time.Minute); ok || err != nil {
			t.Errorf("renew by a non-holder: got %v, %v, want false", ok, err)
		}
		if err := b.Release(ctx, "lock", "two"); err != nil {
			t.Fatal(err)
		}
		if h, _ := b.Holder(ctx, "lock"); h != "one" {
			t.Errorf("after a non-holder's release: got holder %q, want one", h)
		}
		if ok, err := a.Renew(ctx, "lock", "one", 100*time.Millisecond); !ok || err != nil {
			t.Fatalf("renew by the holder: got %v, %v", ok, err)
		}
		// The lease lapses by Redis's clock: poll the state, not a fixed sleep.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if h, _ := b.Holder(ctx, "lock"); h == "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("got the lock 5s after its 100ms lease, want it lapsed")
			}
		}
		// A reader that waits gets the entry appended meanwhile.
		got := make(chan []string, 1)
		go func() {
			es, last, err := b.Read(ctx, "log", "0", 10*time.Second)
			if err != nil || len(es) != 1 || last == "0" {
				got <- []string{"error"}
				return
			}
			got <- []string{string(es[0])}
		}()
		if err := a.Append(ctx, "log", []byte("first"), time.Minute); err != nil {
			t.Fatal(err)
		}
		if g := <-got; g[0] != "first" {
			t.Fatalf("got %v, want the entry appended", g)
		}
		if es, _, err := b.Read(ctx, "log", "0", 0); len(es) != 1 || err != nil {
			t.Errorf("read from the start without waiting: got %d entries, %v", len(es), err)
		}
		if !stop(t, srv) {
			return
		}
		for range 3 {
			if _, err := a.Claim(ctx, "lock", "one", time.Minute); llm.KindOf(err) != llm.Unavailable {
				t.Fatalf("Redis down: got %v, want an Unavailable error", err)
			}
		}
		if _, _, err := a.Read(ctx, "log", "0", time.Second); llm.KindOf(err) != llm.Unavailable {
			t.Errorf("Redis down: Read got %v, want an Unavailable error", err)
		}
		if n := sa.Waited(); n > 1 {
			t.Errorf("Redis down: %d calls waited for the timeout, want at most the first (the breaker)", n)
		}
	})
}
