package redisstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
	"github.com/sluice-gw/sluice/internal/usage"
)

// The prompt cache's counters (issue 46) are summed like the others, a negative saving
// included, by every replica; a row written before they existed (its hash has none of their
// fields) reads them as zero.
func TestUsageCacheCounters(t *testing.T) {
	forms(t, func(t *testing.T, srv backend) {
		a, b := replica(t, srv, false, nil).Usage(), replica(t, srv, false, nil).Usage()
		ctx := context.Background()
		l := usage.Labels{Key: "k1", Alias: "claude", Target: "anthropic/claude-sonnet-4-5"}
		cold := usage.Counts{Requests: 1, InputTokens: 5_000, CacheWriteTokens: 4_000, CacheWrite1hTokens: 1_000, CostNano: 30, SavedNano: -5_250_000}
		warm := usage.Counts{Requests: 1, InputTokens: 5_200, CachedTokens: 4_000, CacheWriteTokens: 1_000, CostNano: 10, SavedNano: 10_050_000}
		if err := a.Add(ctx, "2026-06-01", l, cold); err != nil {
			t.Fatal(err)
		}
		if err := b.Add(ctx, "2026-06-01", l, warm); err != nil {
			t.Fatal(err)
		}
		// A row of the older format: only the counters it knew.
		if err := a.Add(ctx, "2026-06-01", usage.Labels{Key: "k0", Alias: "claude"}, usage.Counts{Requests: 1, InputTokens: 9}); err != nil {
			t.Fatal(err)
		}
		got := rows(t, b, "2026-06-01")
		want := usage.Counts{Requests: 2, InputTokens: 10_200, CachedTokens: 4_000, CacheWriteTokens: 5_000, CacheWrite1hTokens: 1_000,
			CostNano: 40, SavedNano: 4_800_000}
		if got["k1"] != want {
			t.Errorf("got %+v, want %+v", got["k1"], want)
		}
		if got["k0"] != (usage.Counts{Requests: 1, InputTokens: 9}) {
			t.Errorf("older row: got %+v, want its counters and zero cache counters", got["k0"])
		}
		var fields []string
		for _, kv := range srv.Dump(t) {
			if strings.HasPrefix(kv, "sluice:{usage:2026-06-01}") {
				fields = append(fields, kv)
			}
		}
		for _, f := range []string{"cache_write_tokens", "cache_write_1h_tokens", "saved_nano"} {
			if !strings.Contains(strings.Join(fields, "\n"), "\x1f"+f) {
				t.Errorf("got %q, want a hash field named %s", fields, f)
			}
		}
	})
}

// A record taken while Redis is down keeps its cache counters through the spool.
func TestUsageCacheCountersSpooled(t *testing.T) {
	srv := redistest.Start(t)
	s := store(t, srv, redisstore.Options{FailOpen: true, Timeout: 5 * time.Second, Spool: 3}, nil)
	u := s.Usage()
	srv.Stop(t)
	c := usage.Counts{Requests: 1, InputTokens: 100, CachedTokens: 80, CacheWriteTokens: 20, CacheWrite1hTokens: 5, SavedNano: -7}
	if err := u.Add(context.Background(), "2026-06-01", usage.Labels{Key: "k"}, c); err != nil {
		t.Fatalf("got %v, want the record spooled", err)
	}
	srv.Start(t)
	drained(t, s)
	if got := rows(t, u, "2026-06-01")["k"]; got != c {
		t.Errorf("got %+v, want %+v", got, c)
	}
}
