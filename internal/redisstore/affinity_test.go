package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A conversation's member written on one replica is read on another; a read renews the
// entry's life (GETEX); an unknown conversation is ""; the key is hash-tagged on its own.
// With Redis down, an error, counted, and no wait: the chain then picks by weight.
func TestAffinity(t *testing.T) {
	forms(t, func(t *testing.T, srv backend) {
		one, two := replica(t, srv, true, nil), replica(t, srv, true, nil)
		a, b := one.Affinity(), two.Affinity()
		ctx := context.Background()
		if got, err := b.Get(ctx, "conv1", "", time.Minute); got != "" || err != nil {
			t.Fatalf("Get of an unknown conversation: got %q, %v; want \"\", nil", got, err)
		}
		// A new conversation's read remembers the member picked for it, in the same trip.
		if got, err := b.Get(ctx, "conv0", "p/w", time.Minute); got != "" || err != nil {
			t.Fatalf("Get of a new conversation: got %q, %v; want \"\", nil", got, err)
		}
		if got, err := a.Get(ctx, "conv0", "p/z", time.Minute); got != "p/w" || err != nil {
			t.Fatalf("Get on the other replica: got %q, %v; want the pick p/w", got, err)
		}
		if err := a.Set(ctx, "conv1", "p/x", time.Minute); err != nil {
			t.Fatal(err)
		}
		pttl := func() int {
			t.Helper()
			r, err := srv.Do("PTTL", "sluice:{aff:conv1}")
			ms, _ := strconv.Atoi(strings.TrimPrefix(r, ":"))
			if err != nil {
				t.Fatalf("PTTL: %v", err)
			}
			return ms
		}
		if _, err := srv.Do("PEXPIRE", "sluice:{aff:conv1}", "2000"); err != nil {
			t.Fatal(err)
		}
		if got, err := b.Get(ctx, "conv1", "", time.Minute); got != "p/x" || err != nil {
			t.Fatalf("Get on the other replica: got %q, %v; want p/x", got, err)
		}
		if ms := pttl(); ms < 50_000 || ms > 60_000 {
			t.Errorf("after a read: got PTTL %d ms, want it renewed to about a minute", ms)
		}
		if err := b.Set(ctx, "conv1", "p/y", time.Minute); err != nil {
			t.Fatal(err)
		}
		if got, _ := a.Get(ctx, "conv1", "", time.Minute); got != "p/y" {
			t.Errorf("after a move: got %q, want p/y", got)
		}
		if !stop(t, srv) {
			return
		}
		before := one.Failures()
		if got, err := a.Get(ctx, "conv1", "", time.Minute); got != "" || err == nil {
			t.Errorf("Redis down: got %q, %v; want an error", got, err)
		}
		if one.Failures() == before {
			t.Errorf("Redis down: the failure was not counted")
		}
	})
}
