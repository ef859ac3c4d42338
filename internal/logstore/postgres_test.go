package logstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/logstore/pgtest"
)

// pgRows runs a query on the store's own database and returns the first column as text.
func pgRows(t *testing.T, st Store, q string, args ...any) []string {
	t.Helper()
	return textRows(t, st.(*pgStore).db, q, args...)
}

// textRows is the one text column of the rows of q on db (a pool or one connection).
func textRows(t *testing.T, db interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}, q string, args ...any) []string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func partitions(t *testing.T, st Store) []string {
	t.Helper()
	p := pgRows(t, st, "SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'sluice_logs'::regclass ORDER BY 1")
	return p
}

func TestPostgres(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := context.Background()

	// Three replicas start at once on a fresh database: one migrates, the others wait for it
	// and find the work done.
	t.Run("migration race", func(t *testing.T) {
		url := srv.NewDB(t)
		var wg sync.WaitGroup
		stores := make([]Store, 3)
		errs := make([]error, 3)
		for i := range stores {
			wg.Go(func() { stores[i], errs[i] = Open(ctx, Options{URL: url}) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("replica %d: Open: %v", i, err)
			}
			defer stores[i].Close()
		}
		if v := pgRows(t, stores[0], "SELECT s.version::text FROM sluice_logs_schema s ORDER BY s.version"); !slices.Equal(v, pgVersions()) {
			t.Errorf("got schema versions %v, want %v (each migration once)", v, pgVersions())
		}
		today := day(time.Now())
		var want []string
		for i := range aheadDays + 1 {
			want = append(want, partName(today.AddDate(0, 0, i)))
		}
		if got := partitions(t, stores[0]); !slices.Equal(got, want) {
			t.Errorf("got partitions %v, want today and the next %d days %v", got, aheadDays, want)
		}
		for i, st := range stores { // every replica writes
			if err := st.Write(ctx, []Record{rec(i, time.Now())}); err != nil {
				t.Errorf("replica %d: Write: %v", i, err)
			}
		}
	})

	// A database of a gateway before issue 46 (three migrations, records in it) takes the
	// prompt cache's columns: its records stay as they were, new ones carry their own.
	t.Run("migration from before issue 46", func(t *testing.T) {
		url := srv.NewDB(t)
		db, err := sql.Open("pgx", url)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		exec := func(q string, args ...any) {
			t.Helper()
			if _, err := db.ExecContext(ctx, q, args...); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		exec(`CREATE TABLE sluice_logs_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`)
		for i, m := range pgSchema[:3] {
			for _, stmt := range m {
				exec(stmt)
			}
			exec("INSERT INTO sluice_logs_schema (version) VALUES ($1)", i+1)
		}
		now := time.Now()
		d := day(now.Add(-time.Minute))
		exec(fmt.Sprintf("CREATE TABLE %s PARTITION OF sluice_logs FOR VALUES FROM ('%s') TO ('%s')",
			partName(d), d.Format(time.RFC3339), d.AddDate(0, 0, 1).Format(time.RFC3339)))
		set := oldRecords(recs(40, now.Add(-time.Minute)))
		if day(set[0].Time) != d {
			set = oldRecords(recs(40, d.Add(time.Hour))) // just after midnight: all on one day
			now = d.Add(time.Hour + time.Minute)
		}
		rows, err := rowsOf(set)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range rows {
			exec(`INSERT INTO sluice_logs (id, time, key_id, key_name, key_meta, alias, target, status, kind, stream,
				cache, tokens_in, tokens_out, cost_usd, first_token_ms, doc, content_request, content_answer,
				content_cap, content_truncated, team)
				VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`,
				w.id, w.time, w.keyID, w.keyName, w.keyMeta, w.alias, w.target, w.status, w.kind, w.stream, w.cache,
				w.tokensIn, w.tokensOut, w.costUSD, w.firstTokenMS, oldDoc(t, set[i]), w.req, w.ans, w.capN, w.trunc, w.team)
		}
		st := mustOpen(t, url, 0)
		if v := pgRows(t, st, "SELECT s.version::text FROM sluice_logs_schema s ORDER BY s.version"); !slices.Equal(v, pgVersions()) {
			t.Errorf("got schema versions %v, want %v", v, pgVersions())
		}
		if n := count(t, st); n != len(set) {
			t.Errorf("got %d records after the migration, want %d", n, len(set))
		}
		checkMigratedRequestID(t, st, set)
		checkMigratedCache(t, st, set, now)
	})

	t.Run("indexes", func(t *testing.T) {
		st := mustOpen(t, srv.NewDB(t), 0)
		got := pgRows(t, st, "SELECT indexdef FROM pg_indexes WHERE tablename = 'sluice_logs' ORDER BY indexname")
		for _, want := range []string{"USING brin (\"time\")", "(key_id, \"time\", id)", "(alias, \"time\", id)",
			"(target, \"time\", id)", "(status, \"time\")", "(request_id, \"time\", id) WHERE (request_id <> ''::text)", "(kind, \"time\")", "(\"time\", id)", "(id, \"time\")"} {
			if !slices.ContainsFunc(got, func(d string) bool { return strings.Contains(d, want) }) {
				t.Errorf("no index %s in %v", want, got)
			}
		}
	})

	// ?q= can go through the trigram index in every day's partition (issue 50): its plan, with
	// the scans of the rows and the walks of the time index off (they win on a few rows),
	// reads the trigram index for the ILIKE of the searched text; and the search finds what it
	// should.
	t.Run("search plan", func(t *testing.T) {
		st := mustOpen(t, srv.NewDB(t), 0)
		s := st.(*pgStore)
		now := time.Now().UTC()
		set := recs(700, now.Add(-time.Minute))
		for i := range set {
			r := &set[i]
			r.Time = now.Add(-time.Duration(i) * 2 * time.Minute)
			r.Capture, r.Content = "content", &Content{Request: fmt.Sprintf("question %d about Zebras", i), Answer: "answer", Cap: 100}
		}
		if err := st.Write(ctx, set); err != nil {
			t.Fatal(err)
		}
		f := Filter{Limit: 100, Q: "Question 606 ABOUT"} // no range: the time's indexes have no condition to read
		q, list, err := s.pageSQL(f)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for _, set := range []string{"ANALYZE sluice_logs", "SET enable_seqscan = off", "SET enable_indexscan = off"} {
			if _, err := conn.ExecContext(ctx, set); err != nil {
				t.Fatal(err)
			}
		}
		plan := textRows(t, conn, "EXPLAIN (ANALYZE) "+q, list...)
		p := strings.Join(plan, "\n")
		if !strings.Contains(p, "Bitmap Index Scan on sluice_logs_") || !strings.Contains(p, "Index Cond: (((COALESCE(content_request") {
			t.Errorf("got plan (%d lines)\n%s\nwant the content's trigram index", len(plan), p)
		}
		if got := ids(all(t, st, f)); !slices.Equal(got, []string{set[606].ID}) {
			t.Errorf("q=%s: got %v, want [%s]", f.Q, got, set[606].ID)
		}
	})

	// Retention drops whole partitions, and a write makes the partition of its day.
	t.Run("retention drops partitions", func(t *testing.T) {
		url := srv.NewDB(t)
		st := mustOpen(t, url, 30*24*time.Hour)
		now := time.Now().UTC()
		old := []Record{rec(1, now.AddDate(0, 0, -45)), rec(2, now.AddDate(0, 0, -31)), rec(3, now.AddDate(0, 0, -29))}
		if err := st.Write(ctx, old); err != nil {
			t.Fatal(err)
		}
		for _, r := range old {
			if p := partName(day(r.Time)); !slices.Contains(partitions(t, st), p) {
				t.Fatalf("no partition %s after a write on its day", p)
			}
		}
		if err := st.Retain(ctx, now); err != nil {
			t.Fatal(err)
		}
		parts := partitions(t, st)
		for _, r := range old[:2] {
			if slices.Contains(parts, partName(day(r.Time))) {
				t.Errorf("partition %s is still there, %s old", partName(day(r.Time)), now.Sub(r.Time).Round(time.Hour))
			}
		}
		if !slices.Contains(parts, partName(day(old[2].Time))) {
			t.Errorf("partition of %s dropped, want it kept", old[2].Time)
		}
		if got := ids(all(t, st, wide())); !slices.Equal(got, []string{old[2].ID}) {
			t.Errorf("got %v after retention, want [%s]", got, old[2].ID)
		}
		// Another replica dropped a partition this one knew: the write makes it again.
		other := mustOpen(t, url, 30*24*time.Hour)
		if err := other.Write(ctx, []Record{rec(4, now.AddDate(0, 0, -10))}); err != nil {
			t.Fatal(err)
		}
		if err := other.Retain(ctx, now.AddDate(0, 0, 25)); err != nil { // drops day -10
			t.Fatal(err)
		}
		if err := st.Write(ctx, []Record{rec(5, now.AddDate(0, 0, -10))}); err != nil {
			t.Fatalf("write after another replica's retention: %v", err)
		}
	})
}

// TestPostgresOutage: PostgreSQL stops for 3 s while a writer takes records at a steady rate;
// Add never waits, the records wait in the spool, and after the restart every record is in
// the store exactly once.
func TestPostgresOutage(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := context.Background()
	st := mustOpen(t, srv.URL, 0)
	var dropped atomic.Int64
	w := NewWriter(st, WriterOptions{Batch: 100, Every: 20 * time.Millisecond, Timeout: time.Second,
		OnDrop: func(n int) { dropped.Add(int64(n)) }})
	var (
		n      atomic.Int64
		stop   = make(chan struct{})
		wg     sync.WaitGroup
		slowMu sync.Mutex
		slow   time.Duration // the longest Add
	)
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			for range 2 { // about 2000 records a second
				i := int(n.Add(1))
				start := time.Now()
				w.Add(rec(i, time.Now()))
				d := time.Since(start)
				slowMu.Lock()
				slow = max(slow, d)
				slowMu.Unlock()
			}
		}
	})
	time.Sleep(500 * time.Millisecond)
	srv.Stop(t)
	time.Sleep(time.Second)
	if w.Spooled() == 0 {
		t.Error("nothing in the spool while PostgreSQL is down")
	}
	time.Sleep(2 * time.Second)
	srv.Start(t)
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := w.Close(cctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if d := dropped.Load(); d != 0 || w.Dropped() != 0 {
		t.Fatalf("dropped %d (OnDrop) / %d (Dropped), want 0: the spool holds a 3 s outage", d, w.Dropped())
	}
	total := int(n.Load())
	got := pgRows(t, st, "SELECT count(*)::text || ' ' || count(DISTINCT id)::text FROM sluice_logs")[0]
	if want := fmt.Sprintf("%d %d", total, total); got != want {
		t.Fatalf("got %s records (all, distinct ids), want %s", got, want)
	}
	t.Logf("%d records through a 3 s outage, each once; the longest Add took %v", total, slow)
}

// pgVersions are the versions of every migration, "1" to len(pgSchema).
func pgVersions() []string {
	v := make([]string, len(pgSchema))
	for i := range v {
		v[i] = fmt.Sprint(i + 1)
	}
	return v
}
