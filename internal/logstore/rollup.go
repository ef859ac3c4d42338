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
// (Options.RollupRetention).

// rollupTable is the rollups' table in both stores.
const rollupTable = "sluice_usage_hourly"

// rollupDims are the rollups' key columns; rollupSums the columns a batch adds to.
const (
	rollupDims = "hour_us, key_id, team, alias, target, status_class, wire"
	rollupSums = "requests, errors, tokens_in, tokens_out, cache_read_tokens, cache_write_tokens, cache_hits, cost_usd, saved_usd"
)

// rollupCols is how many columns an upsert writes a row: the key, key_name, the sums and
// the sketch.
const rollupCols = 7 + 1 + 9 + SketchBins

// rollupDDL is the rollups' table, with the integer and real types of a store.
func rollupDDL(integer, real string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `CREATE TABLE %s (
		hour_us %[2]s NOT NULL,
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
		saved_usd %[3]s NOT NULL,`, rollupTable, integer, real)
	for _, c := range strings.Split(sketchCols, ", ") {
		fmt.Fprintf(&b, "\n\t\t%s %s NOT NULL,", c, integer)
	}
	fmt.Fprintf(&b, "\n\t\tPRIMARY KEY (%s)\n\t)", rollupDims)
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
		rollupTable, rollupDims, rollupSums, sketchCols, hour, wire, sketchCases("first_token_ms", "sum"), table)
}

// rollupKey is a rollup's key.
type rollupKey struct {
	hour                           int64 // µs since the epoch
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
		k := rollupKey{hour: w.time.Truncate(time.Hour).UnixMicro(), key: w.keyID, team: w.team, alias: w.alias,
			target: w.target, wire: w.wire, class: w.status / 100}
		r := by[k]
		if r == nil {
			r = &rollup{rollupKey: k}
			by[k] = r
		}
		r.keyName = max(r.keyName, w.keyName)
		r.requests++
		if w.kind != "" && w.kind != "canceled" {
			r.errors++
		}
		r.tokensIn += int64(w.tokensIn)
		r.tokensOut += int64(w.tokensOut)
		r.cacheRead += int64(w.cacheRead)
		r.cacheWrite += int64(w.cacheWrite)
		if w.cache == "hit" {
			r.cacheHits++
		}
		r.cost += w.costUSD
		r.saved += w.savedUSD
		r.ft.Add(w.firstTokenMS)
	}
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

// rollupChunk is how many rollups one upsert carries.
const rollupChunk = 32

// rollupUpsert is the statement that adds n rollups (placeholders $n when dollar).
func rollupUpsert(n int, dollar bool) string {
	a := &args{dollar: dollar}
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s (%s, key_name, %s, %s) VALUES ", rollupTable, rollupDims, rollupSums, sketchCols)
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
	fmt.Fprintf(&b, " ON CONFLICT (%s) DO UPDATE SET key_name = excluded.key_name", rollupDims)
	for _, c := range append(strings.Split(rollupSums, ", "), strings.Split(sketchCols, ", ")...) {
		fmt.Fprintf(&b, ", %[1]s = %[2]s.%[1]s + excluded.%[1]s", c, rollupTable)
	}
	return b.String()
}

// execer is a transaction (or a connection) that runs a statement.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// addRollups adds rs to the rollups, within the batch's transaction tx.
func addRollups(ctx context.Context, tx execer, rs []rollup, dollar bool) error {
	list := make([]any, 0, rollupChunk*rollupCols)
	for i := 0; i < len(rs); i += rollupChunk {
		chunk := rs[i:min(i+rollupChunk, len(rs))]
		list = list[:0]
		for _, r := range chunk {
			list = append(list, r.hour, r.key, r.team, r.alias, r.target, int64(r.class), r.wire, r.keyName,
				r.requests, r.errors, r.tokensIn, r.tokensOut, r.cacheRead, r.cacheWrite, r.cacheHits, r.cost, r.saved)
			for _, c := range r.ft {
				list = append(list, c)
			}
		}
		if _, err := tx.ExecContext(ctx, rollupUpsert(len(chunk), dollar), list...); err != nil {
			return fmt.Errorf("adding to the rollups: %w", err)
		}
	}
	return nil
}

// usageSQL is the query of q: the whole UTC hours of its range from the rollups, the
// hours it cuts (its edges) from the records, summed together by bucket and group. A
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
	rollBucket, recBucket := "0", "0"
	if q.Bucket != Whole {
		w := int64(time.Hour / time.Microsecond)
		if q.Bucket == Day {
			w *= 24
		}
		rollBucket, recBucket = fmt.Sprintf("(hour_us / %[1]d) * %[1]d", w), s.d.bucket(q.Bucket)
	}
	roll := fmt.Sprintf(`SELECT %s AS b, %s AS g, key_name AS kn, requests AS n, errors AS e, tokens_in AS ti,
		tokens_out AS tx, cost_usd AS c, cache_read_tokens AS cr, cache_write_tokens AS cw, saved_usd AS sv, cache_hits AS ch, %s
		FROM %s WHERE hour_us >= %s AND hour_us < %s`,
		rollBucket, group, sketchCols, rollupTable, a.add(lo.UnixMicro()), a.add(hi.UnixMicro()))
	roll += filters()
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
		FROM (%s UNION ALL %s) u GROUP BY b, g ORDER BY b, g`, keyName, strings.Join(sums, ", "), roll, rec)
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
