package logstore

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// The hourly rollups (issue 50): the writer adds each batch's sums to them in the same
// transaction as its records, so that /admin/usage reads some 24 rows a day and a group,
// not every record. A rollup is one UTC hour of one (key, team, alias, target, status
// class, wire); it keeps requests, errors, tokens in and out, prompt-cache reads and writes,
// response-cache hits, cost, saved and a first-token Sketch. Only the records a batch
// really inserted are summed (a record written again is skipped, and so is its share), so
// the rollups equal the records' sums whatever the retries. They outlive the records
// (Options.RollupRetention). The daily rollups are the same sums by UTC day, added in the
// same transaction: a month by day reads some 30 rows a group, and the hours a range cuts
// at its edges come from the hourly ones.

// rollupTable is the hourly rollups' table in both stores, dailyTable the daily ones'.
const (
	rollupTable = "sluice_usage_hourly"
	dailyTable  = "sluice_usage_daily"
)

// rollupKeys are the rollups' key columns after their time; rollupSums the columns a batch
// adds to.
const (
	rollupKeys = "key_id, team, alias, target, status_class, wire"
	rollupSums = "requests, errors, tokens_in, tokens_out, cache_read_tokens, cache_write_tokens, cache_hits, cost_usd, saved_usd"
)

// level is one level of rollups: its table, its time column and its width in µs.
type level struct {
	table, col string
	width      int64
}

// hourly and daily are the two levels of rollups.
var (
	hourly = level{rollupTable, "hour_us", int64(time.Hour / time.Microsecond)}
	daily  = level{dailyTable, "day_us", int64(24 * time.Hour / time.Microsecond)}
)

// dims are the level's key columns.
func (l level) dims() string { return l.col + ", " + rollupKeys }

// rollupCols is how many columns an upsert writes a row: the key, key_name, the sums and
// the sketch.
const rollupCols = 7 + 1 + 9 + SketchBins

// rollupDDL is the table of the level l, with the integer and real types of a store.
func rollupDDL(l level, integer, real string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `CREATE TABLE %s (
		%[4]s %[2]s NOT NULL,
		key_id text NOT NULL,
		team text NOT NULL,
		alias text NOT NULL,
		target text NOT NULL,
		status_class integer NOT NULL,
		wire text NOT NULL,
		key_name text NOT NULL,
		requests %[2]s NOT NULL,
		errors %[2]s NOT NULL,
		tokens_in %[2]s NOT NULL,
		tokens_out %[2]s NOT NULL,
		cache_read_tokens %[2]s NOT NULL,
		cache_write_tokens %[2]s NOT NULL,
		cache_hits %[2]s NOT NULL,
		cost_usd %[3]s NOT NULL,
		saved_usd %[3]s NOT NULL,`, l.table, integer, real, l.col)
	for _, c := range strings.Split(sketchCols, ", ") {
		fmt.Fprintf(&b, "\n\t\t%s %s NOT NULL,", c, integer)
	}
	fmt.Fprintf(&b, "\n\t\tPRIMARY KEY (%s)\n\t)", l.dims())
	return b.String()
}

// rollupFill sums the records a store already holds into the rollups: the migration that
// makes the table runs it once. hour is the SQL of a record's hour in microseconds, wire
// the SQL of its wire (the record's document holds it; no column does).
func rollupFill(hour, wire string) string {
	return fmt.Sprintf(`INSERT INTO %s (%s, key_name, %s, %s)
		SELECT %s, key_id, team, alias, target, status / 100, %s, max(key_name), count(*),
			sum(CASE WHEN kind <> '' AND kind <> 'canceled' THEN 1 ELSE 0 END), sum(tokens_in), sum(tokens_out),
			sum(cache_read_tokens), sum(cache_write_tokens), sum(CASE WHEN cache = 'hit' THEN 1 ELSE 0 END),
			sum(cost_usd), sum(saved_usd), %s
		FROM %s GROUP BY 1, 2, 3, 4, 5, 6, 7`,
		rollupTable, hourly.dims(), rollupSums, sketchCols, hour, wire, sketchCases("first_token_ms", "sum"), table)
}

// dailyFill sums the hourly rollups a store already holds into the daily ones: the
// migration that makes the daily table runs it once.
func dailyFill() string {
	sums := strings.Split(rollupSums+", "+sketchCols, ", ")
	for i, c := range sums {
		sums[i] = "sum(" + c + ")"
	}
	return fmt.Sprintf(`INSERT INTO %s (%s, key_name, %s, %s)
		SELECT (hour_us / %[5]d) * %[5]d, %[6]s, max(key_name), %[7]s FROM %[8]s GROUP BY 1, 2, 3, 4, 5, 6, 7`,
		dailyTable, daily.dims(), rollupSums, sketchCols, daily.width, rollupKeys, strings.Join(sums, ", "), rollupTable)
}

// rollupKey is a rollup's key.
type rollupKey struct {
	hour                           int64 // µs since the epoch (the day's start in a daily rollup)
	key, team, alias, target, wire string
	class                          int // status / 100
}

// rollup is what one batch adds to one rollup.
type rollup struct {
	rollupKey
	keyName                                                                 string
	requests, errors, tokensIn, tokensOut, cacheRead, cacheWrite, cacheHits int64
	cost, saved                                                             float64
	ft                                                                      Sketch
}

// rollupsOf sums the rows of a batch the store inserted (inserted[id]) by rollup, in the
// order of their keys: two writers that add to the same rollups lock them in one order. A
// batch that holds one record twice inserted it once, and counts it once (inserted is
// emptied as it is read).
func rollupsOf(rows []row, inserted map[string]bool) []rollup {
	by := map[rollupKey]*rollup{}
	for i := range rows {
		w := &rows[i]
		if !inserted[w.id] {
			continue
		}
		delete(inserted, w.id)
		one := rollup{rollupKey: rollupKey{hour: w.time.Truncate(time.Hour).UnixMicro(), key: w.keyID, team: w.team,
			alias: w.alias, target: w.target, wire: w.wire, class: w.status / 100},
			keyName: w.keyName, requests: 1, tokensIn: int64(w.tokensIn), tokensOut: int64(w.tokensOut),
			cacheRead: int64(w.cacheRead), cacheWrite: int64(w.cacheWrite), cost: w.costUSD, saved: w.savedUSD}
		if w.kind != "" && w.kind != "canceled" {
			one.errors = 1
		}
		if w.cache == "hit" {
			one.cacheHits = 1
		}
		one.ft.Add(w.firstTokenMS)
		addTo(by, one.rollupKey, &one)
	}
	return sortRollups(by)
}

// dailyOf sums hourly rollups by UTC day.
func dailyOf(rs []rollup) []rollup {
	by := map[rollupKey]*rollup{}
	for i := range rs {
		k := rs[i].rollupKey
		k.hour -= k.hour % daily.width
		addTo(by, k, &rs[i])
	}
	return sortRollups(by)
}

// addTo adds o's sums to the rollup of by under the key k.
func addTo(by map[rollupKey]*rollup, k rollupKey, o *rollup) {
	r := by[k]
	if r == nil {
		r = &rollup{rollupKey: k}
		by[k] = r
	}
	r.keyName = max(r.keyName, o.keyName)
	r.requests += o.requests
	r.errors += o.errors
	r.tokensIn += o.tokensIn
	r.tokensOut += o.tokensOut
	r.cacheRead += o.cacheRead
	r.cacheWrite += o.cacheWrite
	r.cacheHits += o.cacheHits
	r.cost += o.cost
	r.saved += o.saved
	r.ft.Merge(&o.ft)
}

// sortRollups are the rollups of by in the order of their keys.
func sortRollups(by map[rollupKey]*rollup) []rollup {
	out := make([]rollup, 0, len(by))
	for _, r := range by {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b rollup) int {
		return cmp.Or(cmp.Compare(a.hour, b.hour), strings.Compare(a.key, b.key), strings.Compare(a.team, b.team),
			strings.Compare(a.alias, b.alias), strings.Compare(a.target, b.target), cmp.Compare(a.class, b.class),
			strings.Compare(a.wire, b.wire))
	})
	return out
}

// rollupChunk is the most rollups one upsert carries. A level's rollups go in upserts of
// powers of two (32, 16, ... 1): seven statements a level, each prepared once (prepared).
const rollupChunk = 32

// rollupUpsert is the statement that adds n rollups of the level l (placeholders $n when
// dollar).
func rollupUpsert(l level, n int, dollar bool) string {
	a := &args{dollar: dollar}
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s (%s, key_name, %s, %s) VALUES ", l.table, l.dims(), rollupSums, sketchCols)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for j := range rollupCols {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(a.add(nil))
		}
		b.WriteByte(')')
	}
	fmt.Fprintf(&b, " ON CONFLICT (%s) DO UPDATE SET key_name = excluded.key_name", l.dims())
	for _, c := range append(strings.Split(rollupSums, ", "), strings.Split(sketchCols, ", ")...) {
		fmt.Fprintf(&b, ", %[1]s = %[2]s.%[1]s + excluded.%[1]s", c, l.table)
	}
	return b.String()
}

// prepared are a store's statements of many rows (the records' inserts, the rollups'
// upserts), each prepared on first use for its name and number of rows and kept until the
// store closes: the pure-Go SQLite parsed each batch's statements (50 parameters a rollup,
// 26 a record) anew, some 9% of its writer's CPU. database/sql prepares a kept statement
// again on each connection that runs it, once.
type prepared struct {
	db     *sql.DB
	dollar bool
	mu     sync.Mutex
	stmts  map[stmtKey]*sql.Stmt
}

// stmtKey names a prepared statement: what it does (a level's table) and its number of rows.
type stmtKey struct {
	name string
	n    int
}

// stmt is the statement name of n rows, prepared from query(n) the first time.
func (p *prepared) stmt(ctx context.Context, name string, n int, query func(n int) string) (*sql.Stmt, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := stmtKey{name, n}
	if st, ok := p.stmts[k]; ok {
		return st, nil
	}
	st, err := p.db.PrepareContext(ctx, query(n))
	if err != nil {
		return nil, err
	}
	if p.stmts == nil {
		p.stmts = map[stmtKey]*sql.Stmt{}
	}
	p.stmts[k] = st
	return st, nil
}

// chunk is how many of left rows the next statement of a batch carries: most, then the
// powers of two below it, so that a few prepared statements serve every batch.
func chunk(most, left int) int {
	for most > left {
		most /= 2
	}
	return most
}

// close closes the prepared statements; the store's Close calls it before closing its
// database.
func (p *prepared) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, st := range p.stmts {
		st.Close()
		delete(p.stmts, k)
	}
}

// addRollups adds the hourly rollups rs, and their sums by day, to the rollups, within the
// batch's transaction tx.
func (p *prepared) addRollups(ctx context.Context, tx *sql.Tx, rs []rollup) error {
	if err := p.addLevel(ctx, tx, hourly, rs); err != nil {
		return err
	}
	return p.addLevel(ctx, tx, daily, dailyOf(rs))
}

// addLevel adds rs to the rollups of the level l.
func (p *prepared) addLevel(ctx context.Context, tx *sql.Tx, l level, rs []rollup) error {
	list := make([]any, 0, rollupChunk*rollupCols)
	for len(rs) > 0 {
		n := chunk(rollupChunk, len(rs))
		list = list[:0]
		for _, r := range rs[:n] {
			list = append(list, r.hour, r.key, r.team, r.alias, r.target, int64(r.class), r.wire, r.keyName,
				r.requests, r.errors, r.tokensIn, r.tokensOut, r.cacheRead, r.cacheWrite, r.cacheHits, r.cost, r.saved)
			for _, c := range r.ft {
				list = append(list, c)
			}
		}
		st, err := p.stmt(ctx, l.table, n, func(n int) string { return rollupUpsert(l, n, p.dollar) })
		if err == nil {
			_, err = tx.StmtContext(ctx, st).ExecContext(ctx, list...)
		}
		if err != nil {
			return fmt.Errorf("adding to the %s rollups: %w", l.table, err)
		}
		rs = rs[n:]
	}
	return nil
}

// usageSQL is the query of q: the whole UTC hours of its range from the rollups, the
// hours it cuts (its edges) from the records, summed together by bucket and group. By day
// or in one bucket, the whole UTC days within those hours come from the daily rollups and
// the hours before and after them from the hourly ones. A
// grouping by key metadata, which the rollups do not keep, reads the records alone.
// records reads the records alone, as a grouping by metadata does (the benchmark's
// comparison).
func (s *sqlStore) usageSQL(q UsageQuery, records bool) (string, []any) {
	a := &args{dollar: s.d.dollar}
	lo := q.From.Add(time.Hour - 1).Truncate(time.Hour) // the first whole hour
	hi := q.To.Truncate(time.Hour)                      // the end of the last
	_, meta := metaField(q.GroupBy)
	if meta || records || !lo.Before(hi) {
		lo, hi = q.From, q.From
	}
	dlo, dhi := day(lo.Add(24*time.Hour-1)), day(hi) // the whole days within, when q.Bucket allows
	if q.Bucket == Hour || !dlo.Before(dhi) {
		dlo, dhi = lo, lo
	}
	group, keyName := "''", "''"
	switch q.GroupBy {
	case "key":
		group, keyName = "key_id", "max(kn)"
	case "alias", "target", "team":
		group = q.GroupBy
	}
	filters := func() string {
		var f string
		if q.Key != "" {
			f += " AND key_id = " + a.add(q.Key)
		}
		if q.Team != "" {
			f += " AND team = " + a.add(q.Team)
		}
		if q.Scope != nil {
			f += " AND " + s.scope(q.Scope, a)
		}
		return f
	}
	recBucket := "0"
	if q.Bucket != Whole {
		recBucket = s.d.bucket(q.Bucket)
	}
	// roll reads the rollups of the level l from from to to.
	roll := func(l level, from, to time.Time) string {
		bucket := "0"
		if q.Bucket != Whole {
			w := hourly.width
			if q.Bucket == Day {
				w = daily.width
			}
			bucket = fmt.Sprintf("(%[1]s / %[2]d) * %[2]d", l.col, w)
		}
		return fmt.Sprintf(`SELECT %s AS b, %s AS g, key_name AS kn, requests AS n, errors AS e, tokens_in AS ti,
		tokens_out AS tx, cost_usd AS c, cache_read_tokens AS cr, cache_write_tokens AS cw, saved_usd AS sv, cache_hits AS ch, %s
		FROM %s WHERE %[5]s >= %[6]s AND %[5]s < %[7]s`,
			bucket, group, sketchCols, l.table, l.col, a.add(from.UnixMicro()), a.add(to.UnixMicro())) + filters()
	}
	rolls := roll(hourly, lo, dlo) + " UNION ALL " + roll(daily, dlo, dhi) + " UNION ALL " + roll(hourly, dhi, hi)
	recGroup := group
	if meta {
		name, _ := metaField(q.GroupBy)
		recGroup = "coalesce(" + fmt.Sprintf(s.d.meta, a.add(s.d.metaArg(name))) + ", '')"
	}
	t := s.d.timeCol
	rec := fmt.Sprintf(`SELECT %s, %s, key_name, 1, CASE WHEN kind <> '' AND kind <> 'canceled' THEN 1 ELSE 0 END,
		tokens_in, tokens_out, cost_usd, cache_read_tokens, cache_write_tokens, saved_usd, CASE WHEN cache = 'hit' THEN 1 ELSE 0 END, %s
		FROM %s WHERE (%s >= %s AND %s < %s OR %s >= %s AND %s < %s)`,
		recBucket, recGroup, sketchCases("first_token_ms", ""), table,
		t, a.add(s.d.timeArg(q.From)), t, a.add(s.d.timeArg(lo)), t, a.add(s.d.timeArg(hi)), t, a.add(s.d.timeArg(q.To)))
	rec += filters()
	sums := make([]string, SketchBins)
	for i, c := range strings.Split(sketchCols, ", ") {
		sums[i] = "CAST(sum(" + c + ") AS BIGINT)"
	}
	sel := fmt.Sprintf(`SELECT b, g, %s, CAST(sum(n) AS BIGINT), CAST(sum(e) AS BIGINT), CAST(sum(ti) AS BIGINT),
		CAST(sum(tx) AS BIGINT), CAST(sum(c) AS DOUBLE PRECISION), CAST(sum(cr) AS BIGINT), CAST(sum(cw) AS BIGINT),
		CAST(sum(sv) AS DOUBLE PRECISION), CAST(sum(ch) AS BIGINT), %s
		FROM (%s UNION ALL %s) u GROUP BY b, g ORDER BY b, g`, keyName, strings.Join(sums, ", "), rolls, rec)
	return sel, a.list
}

func (s *sqlStore) Usage(ctx context.Context, q UsageQuery) ([]UsageRow, error) {
	return s.usage(ctx, q, false)
}

// usage is Usage, from the records alone when records is set.
func (s *sqlStore) usage(ctx context.Context, q UsageQuery, records bool) ([]UsageRow, error) {
	if err := checkUsage(q); err != nil {
		return nil, err
	}
	sel, list := s.usageSQL(q, records)
	rows, err := s.db.QueryContext(ctx, sel, list...)
	if err != nil {
		return nil, fmt.Errorf("logstore: %s usage: %w", s.d.name, err)
	}
	defer rows.Close()
	var out []UsageRow
	for rows.Next() {
		var (
			u  UsageRow
			us int64
		)
		dst := []any{&us, &u.Group, &u.KeyName, &u.Requests, &u.Errors, &u.TokensIn, &u.TokensOut, &u.CostUSD,
			&u.CacheReadTokens, &u.CacheWriteTokens, &u.SavedUSD, &u.CacheHits}
		for i := range u.FirstToken {
			dst = append(dst, &u.FirstToken[i])
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, fmt.Errorf("logstore: %s usage: %w", s.d.name, err)
		}
		u.Bucket = time.UnixMicro(us).UTC()
		if q.Bucket == Whole {
			u.Bucket = q.From.UTC()
		}
		u.P95FirstTokenMS = u.FirstToken.Quantile(0.95)
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("logstore: %s usage: %w", s.d.name, err)
	}
	return out, nil
}

// scanIDs reads the ids an INSERT ... RETURNING id gave into set, and closes rows.
func scanIDs(rows *sql.Rows, set map[string]bool) error {
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		set[id] = true
	}
	return rows.Err()
}

// contentKept remembers up to when a store has emptied the content past the content
// retention, so that each Retain reads only the records that aged past it since the last
// (the first after Open reads them all). Safe for concurrent use.
type contentKept struct {
	mu   sync.Mutex
	upTo time.Time
}

// span is the range of record times whose content to empty now: from what was done to cut.
func (k *contentKept) span(cut time.Time) (from, to time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	from = k.upTo
	if from.IsZero() {
		from = time.UnixMicro(0)
	}
	if cut.Before(from) {
		cut = from
	}
	return from, cut
}

// done records that the content of the records before t is emptied.
func (k *contentKept) done(t time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if t.After(k.upTo) {
		k.upTo = t
	}
}

func (s *sqlStore) sqlOf() *sqlStore { return s }
