package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/cache"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
)

var _ cache.Store = (*redisstore.Cache)(nil)

// Entries are shared by every store on one Redis, expire with their TTL, and a Redis that
// is down answers an llm.Unavailable error at once (the cache's miss), not a wait.
func TestCacheStore(t *testing.T) {
	srv := redistest.Start(t)
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
	srv.Stop(t)
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
}
