package logstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/logstore/pgtest"
)

// BenchmarkUsage is /admin/usage's query from the rollups against the same from the records
// alone (issue 50), in each store, over SLUICE_BENCH_RECORDS records (default 200,000) of 20
// keys spread over 30 days, each key with its own team, alias, target and wire (as a fleet's
// keys mostly are): 30 days by day and key, and the last 24 hours by hour. What the rollups
// save grows with the records an hour and key: here some 14, at 10 M records a month
// hundreds.
func BenchmarkUsage(b *testing.B) {
	n := 200_000
	if s := os.Getenv("SLUICE_BENCH_RECORDS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	b.Run("sqlite", func(b *testing.B) {
		benchUsage(b, mustOpen(b, "sqlite://"+filepath.Join(b.TempDir(), "logs.db"), 0), n)
	})
	b.Run("postgres", func(b *testing.B) {
		benchUsage(b, mustOpen(b, pgtest.Start(b).URL, 0), n)
	})
}

func benchUsage(b *testing.B, st Store, n int) {
	ctx := context.Background()
	now := time.Now().UTC()
	rng := rand.New(rand.NewPCG(1, 2))
	batch := make([]Record, 0, 1000)
	for i := range n {
		r := randomRecord(rng, i, now, 30)
		k := rng.IntN(20)
		r.KeyID, r.Team, r.Alias = fmt.Sprintf("key_%02d", k), fmt.Sprintf("team_%d", k%4), []string{"fast", "smart"}[k%2]
		r.Target, r.Wire = []string{"openai/gpt-4o-mini", "anthropic/claude"}[k%2], []string{"chat", "responses", "messages"}[k%3]
		batch = append(batch, r)
		if len(batch) == cap(batch) || i == n-1 {
			if err := st.Write(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	s := st.(interface{ sqlOf() *sqlStore }).sqlOf()
	today := day(now)
	for _, c := range []struct {
		name string
		q    UsageQuery
	}{
		{"30d-by-day-and-key", UsageQuery{From: today.AddDate(0, 0, -29), To: today.AddDate(0, 0, 1), Bucket: Day, GroupBy: "key"}},
		{"24h-by-hour", UsageQuery{From: now.Truncate(time.Hour).Add(-23 * time.Hour), To: now.Truncate(time.Hour).Add(time.Hour), Bucket: Hour}},
	} {
		for _, records := range []bool{false, true} {
			name := c.name + "/rollups"
			if records {
				name = c.name + "/records"
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					if _, err := s.usage(ctx, c.q, records); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
