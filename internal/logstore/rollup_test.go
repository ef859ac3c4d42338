package logstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/logstore/pgtest"
)

// outage is a Store whose writes fail while down: before the batch lands or, every other
// time, after it landed (a timeout that reached the store all the same), so the writer
// spools and writes the batch again.
type outage struct {
	Store
	mu   sync.Mutex
	down bool
	n    int
}

var errOutage = errors.New("the store is down")

func (o *outage) Write(ctx context.Context, rs []Record) error {
	o.mu.Lock()
	down := o.down
	o.n++
	landed := o.n%2 == 0
	o.mu.Unlock()
	if !down {
		return o.Store.Write(ctx, rs)
	}
	if landed {
		if err := o.Store.Write(ctx, rs); err != nil {
			return err
		}
	}
	return errOutage
}

func (o *outage) set(down bool) {
	o.mu.Lock()
	o.down = down
	o.mu.Unlock()
}

// randomRecord is record i of a random load at a time within the last days.
func randomRecord(rng *rand.Rand, i int, now time.Time, days int) Record {
	r := rec(i, now.Add(-time.Duration(rng.Int64N(int64(days)*int64(24*time.Hour)))))
	r.ID = fmt.Sprintf("rnd_%06d", i)
	r.KeyID = fmt.Sprintf("key_%d", rng.IntN(4))
	r.KeyName = r.KeyID + "-name"
	r.Team = []string{"", "red", "blue"}[rng.IntN(3)]
	r.Wire = []string{"chat", "responses", "messages"}[rng.IntN(3)]
	r.TokensIn, r.TokensOut = rng.IntN(5000), rng.IntN(2000)
	r.CacheReadTokens, r.CacheWriteTokens = rng.IntN(r.TokensIn+1), rng.IntN(100)
	r.CostUSD, r.SavedUSD = float64(rng.IntN(100000))/1e6, float64(rng.IntN(2000)-1000)/1e6
	r.FirstTokenMS = []float64{0, rng.Float64() * 200, rng.Float64() * 5000, rng.Float64() * 200000}[rng.IntN(4)]
	return r
}

// TestRollups: after a random load written through the Writer, with restarts of the
// writer and the store, an outage that spools and writes batches again, and retention runs,
// the rollups equal the records' sums (in SQL, hour by hour, for the days the records are
// kept), and Usage answers what was sent for every day the rollups keep, past the records'
// retention too, in both stores.
func TestRollups(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			url := "sqlite://" + filepath.Join(t.TempDir(), "logs.db")
			if kind == "postgres" {
				url = pgtest.Start(t).NewDB(t)
			}
			testRollups(t, url)
		})
	}
}

func testRollups(t *testing.T, url string) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(50, 1))
	now := time.Now().UTC()
	const days = 12
	opt := Options{URL: url, Retention: 4 * 24 * time.Hour, RollupRetention: 8 * 24 * time.Hour}
	var sent []Record
	var st Store
	for round := range 4 { // each round a restart of the store and the writer
		var err error
		if st, err = Open(ctx, opt); err != nil {
			t.Fatal(err)
		}
		o := &outage{Store: st}
		w := NewWriter(o, WriterOptions{Batch: 40, Every: 5 * time.Millisecond, Timeout: 5 * time.Second})
		first := len(sent)
		for i := range 300 {
			if i == 100 {
				o.set(true) // the store fails; the spool holds the records
			}
			if i == 200 {
				o.set(false)
			}
			r := randomRecord(rng, round*1000+i, now, days)
			if i%50 == 0 && len(sent) > first {
				// A record sent again (as a writer does within its spool's life, not after
				// retention dropped it: that one would be counted again): kept once.
				r = sent[first+rng.IntN(len(sent)-first)]
			} else {
				sent = append(sent, r)
			}
			w.Add(r)
		}
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		if err := w.Close(cctx); err != nil || w.Dropped() != 0 {
			t.Fatalf("round %d: Close: %v, %d dropped", round, err, w.Dropped())
		}
		cancel()
		if round%2 == 1 {
			if err := st.Retain(ctx, now); err != nil {
				t.Fatal(err)
			}
		}
		if round < 3 {
			st.Close()
		}
	}
	defer st.Close()
	if err := st.Retain(ctx, now); err != nil {
		t.Fatal(err)
	}
	recCut := day(now.Add(-opt.Retention))
	rollCut := day(now.Add(-opt.RollupRetention))

	// The rollups equal the records' sums, hour by hour (and day by day) and rollup by
	// rollup, where both are kept; the daily rollups equal the hourly ones' sums by day,
	// past the records' retention too. Each check counts the rows either side lacks.
	s := st.(interface{ sqlOf() *sqlStore }).sqlOf()
	wire := "coalesce(json_extract(doc, '$.wire'), '')"
	round := func(c string) string { return "round(" + c + ", 6)" }
	if s.d.dollar {
		wire = "coalesce(doc::jsonb->>'wire', '')"
		round = func(c string) string { return "round(CAST(" + c + " AS NUMERIC), 6)" }
	}
	sums := func(sum string) string { // the sums, the sketch's columns last
		cols := strings.Split(rollupSums+", "+sketchCols, ", ")
		for i, c := range cols {
			if c == "cost_usd" || c == "saved_usd" {
				cols[i] = round(sum + "(" + c + ")")
			} else if sum != "" {
				cols[i] = sum + "(" + c + ")"
			}
		}
		return strings.Join(cols, ", ")
	}
	differ := func(what, x, y string, list ...any) {
		t.Helper()
		for _, q := range []string{x + " EXCEPT " + y, y + " EXCEPT " + x} {
			var n int
			if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM ("+q+") x", list...).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("%s: %d rows differ, want 0", what, n)
			}
		}
	}
	for _, l := range []level{hourly, daily} {
		a := &args{dollar: s.d.dollar}
		roll := fmt.Sprintf("SELECT %s, %s FROM %s WHERE %s >= %s", l.dims(), sums(""), l.table, l.col, a.add(recCut.UnixMicro()))
		b := map[level]Bucket{hourly: Hour, daily: Day}[l]
		recs := fmt.Sprintf(`SELECT %s, key_id, team, alias, target, status / 100, %s, count(*),
			sum(CASE WHEN kind <> '' AND kind <> 'canceled' THEN 1 ELSE 0 END), sum(tokens_in), sum(tokens_out),
			sum(cache_read_tokens), sum(cache_write_tokens), sum(CASE WHEN cache = 'hit' THEN 1 ELSE 0 END),
			%s, %s, %s FROM %s WHERE %s >= %s GROUP BY 1, 2, 3, 4, 5, 6, 7`,
			s.d.bucket(b), wire, round("sum(cost_usd)"), round("sum(saved_usd)"), sketchCases("first_token_ms", "sum"),
			table, s.d.timeCol, a.add(s.d.timeArg(recCut)))
		// Both orders of the two queries take a.list: its two arguments are one in SQLite,
		// and numbered in PostgreSQL.
		differ(l.table+" against the records", roll, recs, a.list...)
	}
	differ("the daily rollups against the hourly ones",
		fmt.Sprintf("SELECT %s, %s FROM %s", daily.dims(), sums(""), dailyTable),
		fmt.Sprintf("SELECT (hour_us / %[1]d) * %[1]d, %s, %s FROM %s GROUP BY 1, 2, 3, 4, 5, 6, 7",
			daily.width, rollupKeys, sums("sum"), rollupTable))
	for _, l := range []level{hourly, daily} {
		var n, old int
		if err := s.db.QueryRowContext(ctx, "SELECT count(*), coalesce(sum(CASE WHEN "+l.col+" < "+fmt.Sprint(recCut.UnixMicro())+
			" THEN 1 ELSE 0 END), 0) FROM "+l.table).Scan(&n, &old); err != nil {
			t.Fatal(err)
		}
		var early int64
		if err := s.db.QueryRowContext(ctx, "SELECT coalesce(min("+l.col+"), 0) FROM "+l.table).Scan(&early); err != nil {
			t.Fatal(err)
		}
		if n == 0 || old == 0 || early < rollCut.UnixMicro() {
			t.Errorf("%s: %d rows, %d past the records' retention, the earliest at %v: want some, some, none before %v",
				l.table, n, old, time.UnixMicro(early).UTC(), rollCut)
		}
	}

	// Usage answers what was sent: from the rollups past the records' retention, from both
	// within it, nothing past the rollups'.
	for _, q := range []UsageQuery{
		{From: rollCut, To: now.Add(time.Hour), Bucket: Day, GroupBy: "key"},
		{From: rollCut.Add(-48 * time.Hour), To: now.Add(time.Hour), Bucket: Hour, GroupBy: "team"},
		{From: recCut.Add(30 * time.Hour).Add(17 * time.Minute), To: now.Add(-3*time.Hour - 5*time.Minute), GroupBy: "alias"}, // edges cut: the records answer them
		{From: rollCut, To: now.Add(time.Hour), Team: "red", GroupBy: "target"},
		// Whole days from the daily rollups, the hours before and after them from the hourly
		// ones, the edges they cut from the records.
		{From: recCut.Add(30*time.Hour + 17*time.Minute), To: now.Add(-26*time.Hour - 10*time.Minute), Bucket: Day, GroupBy: "key"},
		{From: recCut.Add(7*time.Hour + time.Minute), To: now.Add(-90 * time.Minute), Team: "blue"},
	} {
		got, err := st.Usage(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var kept []Record
		for _, r := range sent {
			if !r.Time.Before(rollCut) {
				kept = append(kept, r)
			}
		}
		want := usageWant(kept, q)
		if len(got) != len(want) {
			t.Fatalf("%+v: got %d rows, want %d", q, len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			if !g.Bucket.Equal(w.Bucket) || g.Group != w.Group || g.Requests != w.Requests || g.Errors != w.Errors ||
				g.TokensIn != w.TokensIn || g.TokensOut != w.TokensOut || !near(g.CostUSD, w.CostUSD) ||
				g.CacheReadTokens != w.CacheReadTokens || g.CacheWriteTokens != w.CacheWriteTokens || !near(g.SavedUSD, w.SavedUSD) ||
				g.CacheHits != w.CacheHits || g.FirstToken != w.FirstToken {
				t.Errorf("%+v row %d: got %+v, want %+v", q, i, g, w)
			}
		}
	}
	if n := count(t, st); n == 0 || n >= len(sent) {
		t.Errorf("got %d records of %d after retention, want some dropped", n, len(sent))
	}
}

// testContentRetention: Retain empties the captured content of the records older than the
// content retention (default 7 days) and keeps their metadata, and the content of the
// younger ones; a second run, which reads only what aged since, changes nothing more.
func testContentRetention(t *testing.T, open openFunc) {
	st := open(t, 30*24*time.Hour)
	ctx := context.Background()
	now := time.Now().UTC()
	var set []Record
	for d := range 12 {
		r := rec(d, now.Add(-time.Duration(d)*24*time.Hour-time.Hour))
		r.Capture, r.Content = "content", &Content{Request: fmt.Sprintf("question %d", d), Answer: "answer", Cap: 100}
		set = append(set, r)
	}
	if err := st.Write(ctx, set); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := st.Retain(ctx, now); err != nil {
			t.Fatal(err)
		}
		for _, r := range set {
			got, err := st.Get(ctx, r.ID)
			if err != nil {
				t.Fatalf("Get %s: %v", r.ID, err)
			}
			old := r.Time.Before(now.Add(-DefaultContentRetention))
			if old && got.Content != nil || !old && (got.Content == nil || got.Content.Request != r.Content.Request) {
				t.Errorf("record of %v: got content %+v, want it emptied: %v", r.Time, got.Content, old)
			}
			if got.TokensIn != r.TokensIn || got.Capture != "content" {
				t.Errorf("record of %v: got %+v, want its metadata kept", r.Time, got)
			}
			// ?q= (through the stores' index) finds the content kept, not the content emptied.
			f := wide()
			f.Q = r.Content.Request
			if n := len(all(t, st, f)); n != map[bool]int{true: 0, false: 1}[old] {
				t.Errorf("q=%q: got %d records, want them only while the content is kept (old: %v)", f.Q, n, old)
			}
		}
	}
}

// The writer reports its depth: the records a failing store left in the spool, then 0, 0
// once it has closed (the gateway's sluice_logs_queued and sluice_logs_spooled).
func TestWriterDepth(t *testing.T) {
	o := &outage{Store: openSQLiteTemp(t, 0)}
	o.set(true)
	var mu sync.Mutex
	var last [2]int
	spooled := make(chan struct{}, 1)
	w := NewWriter(o, WriterOptions{Batch: 5, Every: 5 * time.Millisecond, OnDepth: func(q, s int) {
		mu.Lock()
		last = [2]int{q, s}
		mu.Unlock()
		if s == 12 {
			select {
			case spooled <- struct{}{}:
			default:
			}
		}
	}})
	for i := range 12 {
		w.Add(rec(i, time.Now()))
	}
	select {
	case <-spooled:
	case <-time.After(10 * time.Second):
		mu.Lock()
		t.Fatalf("got depth %v, want 12 records in the spool", last)
	}
	o.set(false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if last != [2]int{0, 0} {
		t.Errorf("got depth %v after Close, want 0, 0", last)
	}
}
