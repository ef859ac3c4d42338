package logstore

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/logstore/pgtest"
)

// rollupAcc holds in memory what a run of Writes adds to the rollups, batch after batch:
// the same additions in the same order (addTo, as the upserts add), and a rollup's key_name
// the last batch's, as the upsert sets it. Written once at the end (addLevel), it gives the
// rollup rows those Writes would have left.
type rollupAcc struct{ hours, days map[rollupKey]*rollup }

func newRollupAcc() *rollupAcc {
	return &rollupAcc{hours: map[rollupKey]*rollup{}, days: map[rollupKey]*rollup{}}
}

// add adds one batch's hourly rollups (rollupsOf), and their sums by day, as Write does.
func (a *rollupAcc) add(rs []rollup) {
	for _, l := range []struct {
		by map[rollupKey]*rollup
		rs []rollup
	}{{a.hours, rs}, {a.days, dailyOf(rs)}} {
		for i := range l.rs {
			r := &l.rs[i]
			addTo(l.by, r.rollupKey, r)
			l.by[r.rollupKey].keyName = r.keyName
		}
	}
}

// write adds the sums to the rollup tables within tx.
func (a *rollupAcc) write(ctx context.Context, tx *sql.Tx, u *prepared) error {
	if err := u.addLevel(ctx, tx, hourly, sortRollups(a.hours)); err != nil {
		return err
	}
	return u.addLevel(ctx, tx, daily, sortRollups(a.days))
}

// bulkCommit is how many records a bulk load's transaction carries.
const bulkCommit = 100_000

// bulkLoad writes n records, gen(0) to gen(n-1), into st as Writes of batch records each
// would, at a bulk load's pace: each batch goes through the store's own insert (rowsOf, then
// insertRows or pgInsert: the same columns, the FTS5 triggers and every index), in
// transactions of bulkCommit records, and the batches' rollups are summed in memory
// (rollupAcc) and written once at the end. Records already kept are skipped and not summed,
// as Write skips them. The rollup rows equal those the Writes would have left, bit for bit
// (TestBulkLoad).
func bulkLoad(ctx context.Context, st Store, n, batch int, gen func(i int) Record) error {
	var (
		db  *sql.DB
		ups *prepared
	)
	pg, _ := st.(*pgStore)
	lite, _ := st.(*sqliteStore)
	switch {
	case pg != nil:
		db, ups = pg.db, pg.prep
	case lite != nil:
		db, ups = lite.db, lite.prep
	default:
		return fmt.Errorf("bulkLoad: %T is not an SQL store", st)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if lite != nil { // a page cache of 256 MB for the load (the store's connections keep 2 MB)
		if _, err := conn.ExecContext(ctx, "PRAGMA cache_size = -262144"); err != nil {
			return err
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA cache_size = -2000")
	}
	acc := newRollupAcc()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { tx.Rollback() }()
	commit := func() error {
		if err := tx.Commit(); err != nil {
			return err
		}
		tx, err = conn.BeginTx(ctx, nil)
		return err
	}
	// One goroutine makes the batches' rows (gen, rowsOf: the load's Go side) while this one
	// inserts the last: the two cores each have a side.
	type prepared struct {
		lo   int
		rows []row
		cols []any
		days []time.Time
		err  error
	}
	ready := make(chan prepared, 2)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(ready)
		for lo := 0; lo < n; lo += batch {
			rs := make([]Record, 0, batch)
			for i := lo; i < min(lo+batch, n); i++ {
				rs = append(rs, gen(i))
			}
			p := prepared{lo: lo}
			if p.rows, p.err = rowsOf(rs); p.err == nil && pg != nil {
				p.cols, p.days = pgColumns(p.rows), rowDays(p.rows)
			}
			select {
			case ready <- p:
			case <-stop:
				return
			}
		}
	}()
	days := map[time.Time]bool{}
	for p := range ready {
		lo, rows := p.lo, p.rows
		if p.err != nil {
			return p.err
		}
		inserted := make(map[string]bool, len(rows))
		if pg != nil {
			ds := slices.DeleteFunc(p.days, func(d time.Time) bool { return days[d] })
			if len(ds) > 0 {
				// A partition is made in a transaction of its own, which would wait for this
				// one's lock on the parent: commit first.
				if err := commit(); err != nil {
					return err
				}
				if err := pg.ensure(ctx, ds); err != nil {
					return err
				}
				for _, d := range ds {
					days[d] = true
				}
			}
			err = pgInsertRows(ctx, tx, p.cols, inserted)
		} else {
			_, err = lite.insertRows(ctx, tx, rows, inserted, true)
		}
		if err != nil {
			return fmt.Errorf("bulkLoad: records %d-%d: %w", lo, lo+len(rows)-1, err)
		}
		acc.add(rollupsOf(rows, inserted))
		if (lo+batch)%bulkCommit < batch && lo+batch < n {
			if err := commit(); err != nil {
				return err
			}
		}
	}
	if err := acc.write(ctx, tx, ups); err != nil {
		return err
	}
	return tx.Commit()
}

// benchSpan is how far back the benchmark's records go.
const benchSpan = 30 * 24 * time.Hour

// benchRecord is record j of the n the usage benchmark makes: randomRecord's, in time order
// over the benchSpan before now (as a gateway writes them), its id in that order too, one of
// 20 keys picked by rng, each key with its own team, alias, target and wire (as a fleet's
// keys mostly are). One record in six has captured content, "question j about Zebras".
func benchRecord(rng *rand.Rand, j, n int, now time.Time) Record {
	step := benchSpan / time.Duration(n)
	r := randomRecord(rng, j, now, 30)
	r.Time = now.Add(-benchSpan + time.Duration(j)*step + time.Duration(rng.Int64N(int64(max(step, 1)))))
	r.ID = fmt.Sprintf("bench_%09d", j)
	if r.RequestID == fmt.Sprintf("req_%05d", j) { // the client sent none: it got the record's id
		r.RequestID = r.ID
	}
	k := rng.IntN(20)
	r.KeyID, r.Team, r.Alias = fmt.Sprintf("key_%02d", k), fmt.Sprintf("team_%d", k%4), []string{"fast", "smart"}[k%2]
	r.KeyName = r.KeyID + "-name"
	r.Target, r.Wire = []string{"openai/gpt-4o-mini", "anthropic/claude"}[k%2], []string{"chat", "responses", "messages"}[k%3]
	return r
}

// TestBulkLoad: the benchmark's bulk load and Store.Write, given the same records in the
// same batches (and a batch written again, which both skip), leave the same rollup rows, bit
// for bit, the same /admin/usage answers, and the same pages for the console's filters and a
// text search (FTS5, pg_trgm), in both stores: the benchmark measures what the writer makes.
func TestBulkLoad(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			var srv *pgtest.Server
			url := func() string {
				if kind == "postgres" {
					return srv.NewDB(t)
				}
				return "sqlite://" + filepath.Join(t.TempDir(), "logs.db")
			}
			if kind == "postgres" {
				srv = pgtest.Start(t)
			}
			testBulkLoad(t, mustOpen(t, url(), 0), mustOpen(t, url(), 0))
		})
	}
}

func testBulkLoad(t *testing.T, written, bulk Store) {
	ctx := context.Background()
	const n, batch = 5000, 1000
	now := time.Now().UTC()
	recs := make([]Record, n)
	rng := rand.New(rand.NewPCG(50, 2))
	for j := range recs {
		recs[j] = benchRecord(rng, j, n, now)
	}
	recs = append(recs, recs[1200:1300]...) // written again: kept once, summed once
	for lo := 0; lo < len(recs); lo += batch {
		if err := written.Write(ctx, recs[lo:min(lo+batch, len(recs))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := bulkLoad(ctx, bulk, len(recs), batch, func(i int) Record { return recs[i] }); err != nil {
		t.Fatal(err)
	}
	for _, l := range []level{hourly, daily} {
		w, b := rollupRows(t, written, l), rollupRows(t, bulk, l)
		if len(w) == 0 || !reflect.DeepEqual(w, b) {
			t.Fatalf("%s: %d rows written, %d bulk loaded; first written %q, bulk %q", l.table, len(w), len(b), first(w), first(b))
		}
	}
	today := day(now)
	for _, q := range []UsageQuery{
		{From: today.AddDate(0, 0, -29), To: today.AddDate(0, 0, 1), Bucket: Day, GroupBy: "key"},
		{From: now.Truncate(time.Hour).Add(-23 * time.Hour), To: now.Truncate(time.Hour).Add(time.Hour), Bucket: Hour},
		{From: now.AddDate(0, 0, -7), To: now, Bucket: Whole, GroupBy: "team"},
		{From: now.AddDate(0, 0, -40), To: now, Bucket: Day, GroupBy: "meta.team"},
	} {
		w, b := usageOf(t, written, q), usageOf(t, bulk, q)
		if len(w) == 0 || !reflect.DeepEqual(w, b) {
			t.Errorf("usage %s by %q: written %+v\nbulk loaded %+v", q.Bucket, q.GroupBy, first(w), first(b))
		}
	}
	week := Filter{From: now.AddDate(0, 0, -7), To: now, Limit: MaxLimit}
	for _, f := range []Filter{
		{Q: "about Zebras"}, {Q: fmt.Sprintf("question %d ", (n-1)/6*6)}, {Key: "key_03"}, {Team: "team_2"}, {Status: 502},
	} {
		f.From, f.To, f.Limit = week.From, week.To, week.Limit
		w, b := ids(all(t, written, f)), ids(all(t, bulk, f))
		if len(w) == 0 || !reflect.DeepEqual(w, b) {
			t.Errorf("%+v: written %d records, bulk loaded %d", f, len(w), len(b))
		}
	}
}

// rollupRows are the rows of a level's table, each printed, in the order of their keys.
func rollupRows(t testing.TB, st Store, l level) []string {
	return printRows(t, st.(interface{ sqlOf() *sqlStore }).sqlOf().db, "SELECT * FROM "+l.table+" ORDER BY "+l.dims())
}

// printRows are the rows of q, each printed, every column.
func printRows(t testing.TB, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.TrimSpace(fmt.Sprintln(vals...)))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// usageOf is st's answer to q, its costs to 1e-9 dollars: a store sums the rollup rows in
// its scan order, which the order of the inserts may change, and so the last bits.
func usageOf(t *testing.T, st Store, q UsageQuery) []UsageRow {
	t.Helper()
	rows, err := st.Usage(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		rows[i].CostUSD = math.Round(rows[i].CostUSD*1e9) / 1e9
		rows[i].SavedUSD = math.Round(rows[i].SavedUSD*1e9) / 1e9
	}
	return rows
}

func first[T any](s []T) any {
	if len(s) == 0 {
		return nil
	}
	return s[0]
}
