package logstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/logstore/pgtest"
)

// BenchmarkUsage is /admin/usage's query from the rollups against the same from the records
// alone (issue 50), in each store, over SLUICE_BENCH_RECORDS records (default 200,000) of 20
// keys over 30 days (benchRecord), each key with its own team, alias, target and wire (as a
// fleet's keys mostly are): 30 days by day and key, and the last 24 hours by hour. What the
// rollups save grows with the records an hour and key: here some 14, at 10 M records a month
// hundreds. The records are bulk loaded (bulkLoad: the stores' own inserts, in large
// transactions, and the rollups the writer would have made), so that 10 M take minutes, not
// the hours of Store.Write's batches. SLUICE_BENCH_DIR keeps the SQLite file there
// (logs-N.db) and reuses it when a run has filled it. Beside usage it times the console's
// other reads at that size: a text search (q) over 7 days for one record's phrase, and a page
// filtered by key, team and status over 24 hours.
func BenchmarkUsage(b *testing.B) {
	n := 200_000
	if s := os.Getenv("SLUICE_BENCH_RECORDS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	b.Run("sqlite", func(b *testing.B) {
		dir := os.Getenv("SLUICE_BENCH_DIR")
		if dir == "" {
			dir = b.TempDir()
		}
		benchUsage(b, mustOpen(b, "sqlite://"+filepath.Join(dir, fmt.Sprintf("logs-%d.db", n)), 40*24*time.Hour), n)
	})
	b.Run("postgres", func(b *testing.B) {
		benchUsage(b, mustOpen(b, pgtest.Start(b).URL, 0), n)
	})
}

func benchUsage(b *testing.B, st Store, n int) {
	ctx := context.Background()
	now := time.Now().UTC()
	s := st.(interface{ sqlOf() *sqlStore }).sqlOf()
	var have int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have < n {
		rng := rand.New(rand.NewPCG(1, 2))
		start := time.Now()
		if err := bulkLoad(ctx, st, n, 5000, func(j int) Record { return benchRecord(rng, j, n, now) }); err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		if s.d.dollar { // the statistics autovacuum would have gathered
			for _, t := range []string{"ANALYZE " + table, "VACUUM ANALYZE " + rollupTable, "VACUUM ANALYZE " + dailyTable} {
				if _, err := s.db.ExecContext(ctx, t); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.Logf("%d records bulk loaded in %v: %.0f records/s (rollups included; then %v of ANALYZE in PostgreSQL)",
			n, took.Round(time.Second), float64(n)/took.Seconds(), (time.Since(start) - took).Round(time.Second))
	}
	size := "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()"
	if s.d.dollar {
		size = "SELECT pg_database_size(current_database())"
	}
	var bytes int64
	if err := s.db.QueryRowContext(ctx, size).Scan(&bytes); err != nil {
		b.Fatal(err)
	}
	var rollups [2]int
	for i, t := range []string{rollupTable, dailyTable} {
		if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM "+t).Scan(&rollups[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%d records, %d hourly and %d daily rollups: %.1f GB", max(n, have), rollups[0], rollups[1], float64(bytes)/1e9)
	today := day(now)
	for _, c := range []struct {
		name string
		q    UsageQuery
	}{
		{"30d-by-day-and-key", UsageQuery{From: today.AddDate(0, 0, -29), To: today.AddDate(0, 0, 1), Bucket: Day, GroupBy: "key"}},
		{"24h-by-hour", UsageQuery{From: now.Truncate(time.Hour).Add(-23 * time.Hour), To: now.Truncate(time.Hour).Add(time.Hour), Bucket: Hour}},
	} {
		for _, records := range []bool{false, true} {
			if records && os.Getenv("SLUICE_BENCH_ROLLUPS_ONLY") != "" {
				continue // the records alone take minutes at 10 M
			}
			name := c.name + "/rollups"
			if records {
				name = c.name + "/records"
			}
			b.Run(name, func(b *testing.B) {
				var took []time.Duration
				for b.Loop() {
					t0 := time.Now()
					if _, err := s.usage(ctx, c.q, records); err != nil {
						b.Fatal(err)
					}
					took = append(took, time.Since(t0))
				}
				reportP50(b, took)
				explain(b, s, func() (string, []any) { return s.usageSQL(c.q, records) })
			})
		}
	}
	day24 := Filter{From: now.Add(-24 * time.Hour), To: now, Limit: 100}
	week := Filter{From: now.AddDate(0, 0, -7), To: now, Limit: 100}
	// q looks for the phrase of one record with content (benchRecord: j a multiple of 6) of
	// the last 6 days.
	first := n * 24 / 30 / 6
	span := max(n/6-first, 1)
	for _, c := range []struct {
		name string
		f    func(i int) Filter
	}{
		{"q-7d", func(i int) Filter { f := week; f.Q = fmt.Sprintf("question %d ", 6*(first+i*7919%span)); return f }},
		{"24h-by-key", func(i int) Filter { f := day24; f.Key = fmt.Sprintf("key_%02d", i%20); return f }},
		{"24h-by-team", func(i int) Filter { f := day24; f.Team = fmt.Sprintf("team_%d", i%4); return f }},
		{"24h-by-status", func(int) Filter { f := day24; f.Status = 502; return f }},
	} {
		b.Run(c.name, func(b *testing.B) {
			var took []time.Duration
			i := 0
			for b.Loop() {
				t0 := time.Now()
				if _, err := st.Query(ctx, c.f(i)); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(t0))
				i++
			}
			reportP50(b, took)
			explain(b, s, func() (string, []any) { q, list, _ := s.pageSQL(c.f(i)); return q, list })
		})
	}
}

// explain logs the plan of a benchmark's query when SLUICE_BENCH_EXPLAIN is set: EXPLAIN
// ANALYZE in PostgreSQL, EXPLAIN QUERY PLAN in SQLite.
func explain(b *testing.B, s *sqlStore, query func() (string, []any)) {
	if os.Getenv("SLUICE_BENCH_EXPLAIN") == "" {
		return
	}
	q, list := query()
	how := "EXPLAIN QUERY PLAN "
	if s.d.dollar {
		how = "EXPLAIN (ANALYZE, BUFFERS) "
	}
	b.Log(how + "\n" + strings.Join(printRows(b, s.db, how+q, list...), "\n"))
}

// reportP50 reports the median of the iterations' times (the targets are medians;
// ns/op is their mean).
func reportP50(b *testing.B, took []time.Duration) {
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2])/float64(time.Millisecond), "p50-ms")
}
