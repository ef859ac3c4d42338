package logstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// table is the log's table in both stores (in PostgreSQL, the partitioned parent).
const table = "sluice_logs"

// dialect is what differs between the SQL of the two stores; the queries are built once,
// here, from it.
type dialect struct {
	name string
	// timeCol holds the record's time: timestamptz in PostgreSQL, microseconds in SQLite.
	timeCol string
	timeArg func(time.Time) any
	// like is the case-insensitive LIKE.
	like string
	// dollar: placeholders are $1, $2... (PostgreSQL) instead of ?.
	dollar bool
	// bucket is the SQL of a usage bucket's start in microseconds since the epoch.
	bucket func(Bucket) string
	// meta is the SQL of a key metadata field (its argument follows), and metaArg the
	// argument for a field name.
	meta    string
	metaArg func(name string) any
	// p95 is the SQL of the 95th percentile of first_token_ms over the records that had one.
	p95 string
	// search, when set, is the condition (with one %s, its argument's placeholder) that
	// narrows a text search for q (3 characters or more) through the store's index of the
	// captured content; the LIKE of the rows it names decides.
	search func(q string) (cond string, arg any)
}

// sqlStore is the part of both stores that is the same SQL: reads. The stores embed it and
// add writes, schema and retention.
type sqlStore struct {
	db   *sql.DB
	d    dialect
	prep *prepared
}

// args builds a statement's placeholders and arguments in step.
type args struct {
	dollar bool
	list   []any
}

// add appends a and returns its placeholder.
func (a *args) add(v any) string {
	a.list = append(a.list, v)
	if a.dollar {
		return "$" + strconv.Itoa(len(a.list))
	}
	return "?"
}

// readCols are what scanRecord reads of a record: its document, its content and the
// columns the document leaves out (appendRowDoc).
func (d *dialect) readCols() string {
	return "doc, content_request, content_answer, content_cap, content_truncated, id, request_id, " + d.timeCol +
		", key_id, key_name, team, alias, target, status, kind, stream, cache, affinity, tokens_in, tokens_out," +
		" cache_read_tokens, cache_write_tokens, cost_usd, first_token_ms, saved_usd"
}

// between are the conditions from <= time < to, a zero bound left out (the request log's
// filters and the audit log's).
func (s *sqlStore) between(from, to time.Time, a *args) []string {
	conds := []string{"TRUE"}
	if !from.IsZero() {
		conds = append(conds, s.d.timeCol+" >= "+a.add(s.d.timeArg(from)))
	}
	if !to.IsZero() {
		conds = append(conds, s.d.timeCol+" < "+a.add(s.d.timeArg(to)))
	}
	return conds
}

// where is the WHERE clause of f, without cursor.
func (s *sqlStore) where(f Filter, a *args) string {
	conds := s.between(f.From, f.To, a)
	eq := func(col string, v any) { conds = append(conds, col+" = "+a.add(v)) }
	if f.Key != "" {
		eq("key_id", f.Key)
	}
	if f.Team != "" {
		eq("team", f.Team)
	}
	if f.Alias != "" {
		eq("alias", f.Alias)
	}
	if f.Target != "" {
		eq("target", f.Target)
	}
	// The partial indexes of the records that went wrong are used only when the WHERE holds
	// their own term: SQLite proves no more, nor does PostgreSQL for a generic plan.
	if f.Status != 0 {
		eq("status", f.Status)
		if f.Status != 200 {
			conds = append(conds, "status <> 200")
		}
	}
	if f.Kind != "" {
		eq("kind", f.Kind)
		conds = append(conds, "kind <> ''")
	}
	if f.Stream != nil {
		eq("stream", *f.Stream)
	}
	if f.Cache != "" {
		eq("cache", f.Cache)
	}
	if f.Affinity != "" {
		eq("affinity", f.Affinity)
	}
	if f.RequestID != "" && (clean(f.RequestID) != f.RequestID || len(f.RequestID) > maxIDLen) {
		conds = append(conds, "FALSE") // no record has it (prepare), and PostgreSQL refuses bad UTF-8
	} else if f.RequestID != "" {
		// The column holds the client's own id, "" when the client got the record's id
		// (rowsOf), or the record predates the column (its id was the client's then). The
		// partial index of the ids clients chose is used only when the WHERE holds its term.
		conds = append(conds, fmt.Sprintf("(request_id = %s AND request_id <> '' OR id = %s AND request_id = '')",
			a.add(f.RequestID), a.add(f.RequestID)))
	}
	if f.Scope != nil {
		conds = append(conds, s.scope(f.Scope, a))
	}
	if f.Q != "" && s.d.search != nil && utf8.RuneCountInString(f.Q) >= 3 {
		cond, arg := s.d.search(f.Q)
		conds = append(conds, fmt.Sprintf(cond, a.add(arg)))
	}
	if f.Q != "" {
		pat := "%" + escapeLike(f.Q) + "%"
		conds = append(conds, fmt.Sprintf(`(content_request %[1]s %[2]s ESCAPE '\' OR content_answer %[1]s %[3]s ESCAPE '\')`,
			s.d.like, a.add(pat), a.add(pat)))
	}
	return strings.Join(conds, " AND ")
}

// scope is the condition of sc: the record's team is one of sc.Teams, or its key one of
// sc.Keys; FALSE when both are empty. Either way the store walks an index in the page's
// order: the key's (key_id, time, id) in both stores, the team's (team, time, id) in
// PostgreSQL; SQLite's schema 4 keeps the team in its time index instead (time_us, id, ...,
// team, ...), which a team scope walks newest first, reading the table only for its rows.
func (s *sqlStore) scope(sc *Scope, a *args) string {
	var or []string
	in := func(col string, vs []string) {
		vs = vs[:min(len(vs), maxScope)]
		if len(vs) == 0 {
			return
		}
		ps := make([]string, len(vs))
		for i, v := range vs {
			ps[i] = a.add(v)
		}
		or = append(or, col+" IN ("+strings.Join(ps, ", ")+")")
	}
	in("team", slices.DeleteFunc(slices.Clone(sc.Teams), func(t string) bool { return t == "" })) // "": no team, never a scope
	in("key_id", sc.Keys)
	if len(or) == 0 {
		return "FALSE"
	}
	return "(" + strings.Join(or, " OR ") + ")"
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// pageSQL is the query of one page of f (and one record more, to know there is a next).
func (s *sqlStore) pageSQL(f Filter) (string, []any, error) {
	a := &args{dollar: s.d.dollar}
	var k keyset
	if f.Cursor != "" {
		var err error
		if k, err = decodeCursor(f.Cursor); err != nil {
			return "", nil, badFilter("cursor", "cursor: not a cursor this API gave")
		}
		f.To = through(k, f.To)
	}
	q := "SELECT " + s.d.readCols() + " FROM " + table + " WHERE " + s.where(f, a)
	if f.Cursor != "" {
		q += fmt.Sprintf(" AND (%s, id) < (%s, %s)", s.d.timeCol, a.add(s.d.timeArg(k.Time)), a.add(k.ID))
	}
	q += fmt.Sprintf(" ORDER BY %[1]s DESC, id DESC LIMIT %[2]s", s.d.timeCol, a.add(f.limit()+1))
	return q, a.list, nil
}

// through is the end (exclusive) of a page's range after cursor k: just past k's time, or to
// when that is sooner. The store's index range then starts at the cursor: with the range's
// end alone, SQLite walked every entry newer than the cursor again on each page, and an
// export of 1 M records read its time index some 500 times over (issue 50); PostgreSQL
// also leaves out the days' partitions past the cursor.
func through(k keyset, to time.Time) time.Time {
	if end := k.Time.Add(time.Microsecond); to.IsZero() || end.Before(to) {
		return end
	}
	return to
}

func (s *sqlStore) Query(ctx context.Context, f Filter) (Page, error) {
	q, list, err := s.pageSQL(f)
	if err != nil {
		return Page{}, err
	}
	n := f.limit()
	rows, err := s.db.QueryContext(ctx, q, list...)
	if err != nil {
		return Page{}, fmt.Errorf("logstore: %s query: %w", s.d.name, err)
	}
	defer rows.Close()
	var p Page
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return Page{}, err
		}
		p.Records = append(p.Records, *r)
	}
	if err := rows.Err(); err != nil {
		return Page{}, fmt.Errorf("logstore: %s query: %w", s.d.name, err)
	}
	if len(p.Records) > n {
		p.Records = p.Records[:n]
		last := p.Records[n-1]
		p.NextCursor = encodeCursor(keyset{Time: last.Time, ID: last.ID})
	}
	return p, nil
}

func (s *sqlStore) Get(ctx context.Context, id string) (*Record, error) {
	a := &args{dollar: s.d.dollar}
	if clean(id) != id || len(id) > maxIDLen {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, clip(id))
	}
	row := s.db.QueryRowContext(ctx, "SELECT "+s.d.readCols()+" FROM "+table+" WHERE id = "+a.add(id)+" LIMIT 1", a.list...)
	r, err := scanRecord(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, clip(id))
	}
	return r, err
}

type scanner interface{ Scan(dst ...any) error }

func scanRecord(sc scanner) (*Record, error) {
	var (
		doc      string
		req, ans sql.NullString
		capN     sql.NullInt64
		trunc    sql.NullBool
		at       any // microseconds in SQLite, a time in PostgreSQL
		n        [5]int64
		r        = new(Record)
	)
	// The columns first, then the document (whose members, in one written before
	// appendRowDoc, are the columns' values again).
	err := sc.Scan(&doc, &req, &ans, &capN, &trunc, &r.ID, &r.RequestID, &at, &r.KeyID, &r.KeyName, &r.Team, &r.Alias,
		&r.Target, &n[0], &r.Kind, &r.Stream, &r.Cache, &r.Affinity, &n[1], &n[2], &n[3], &n[4], &r.CostUSD,
		&r.FirstTokenMS, &r.SavedUSD)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return nil, fmt.Errorf("logstore: reading a record: %w", err)
	}
	// "" when the client named no request (the record's id answered it), and in the
	// records from before issue 47, whose id was the client's.
	requestID := cmp.Or(r.RequestID, r.ID)
	if err := json.Unmarshal([]byte(doc), r); err != nil {
		return nil, fmt.Errorf("logstore: a stored record is not JSON: %w", err)
	}
	r.RequestID = requestID
	r.Status, r.TokensIn, r.TokensOut, r.CacheReadTokens, r.CacheWriteTokens = int(n[0]), int(n[1]), int(n[2]), int(n[3]), int(n[4])
	switch t := at.(type) {
	case int64:
		r.Time = time.UnixMicro(t).UTC()
	case time.Time:
		r.Time = t.UTC()
	default:
		return nil, fmt.Errorf("logstore: a stored record's time is a %T", at)
	}
	if req.Valid || ans.Valid {
		r.Content = &Content{Request: req.String, Answer: ans.String, Cap: int(capN.Int64), Truncated: trunc.Bool}
	}
	return r, nil
}

// row is one record in the columns both stores write.
type row struct {
	id, keyID, keyName, keyMeta, team, alias, target, kind, cache, affinity, doc, wire string
	// requestID is the client's own X-Request-Id, "" when it got the record's id: the
	// column's partial index then costs such a record nothing.
	requestID                                          string
	time                                               time.Time
	status, tokensIn, tokensOut, cacheRead, cacheWrite int
	stream                                             bool
	costUSD, firstTokenMS, savedUSD                    float64
	req, ans                                           *string
	capN                                               *int
	trunc                                              *bool
}

// rowsOf prepares a batch and splits each record into columns: the filters' own, and the
// document (the record without its content, which has columns of its own for the text
// search). One bad record fails the batch. The batch's documents and metadata are written
// into one pooled buffer and made one string, which the rows slice: one allocation for the
// batch's JSON instead of some six a record.
func rowsOf(rs []Record) ([]row, error) {
	out := make([]row, len(rs))
	bp := docBufs.Get().(*[]byte)
	defer putDocBuf(bp)
	b := (*bp)[:0]
	cuts := make([]int, 0, 2*len(rs)) // where each record's metadata and document end in b
	for i := range rs {
		r, err := prepare(rs[i])
		if err != nil {
			return nil, err
		}
		if r.KeyMeta == nil {
			b = append(b, "{}"...)
		} else {
			b = appendMeta(b, r.KeyMeta)
		}
		cuts = append(cuts, len(b))
		c := r.Content
		r.Content = nil
		b = appendRowDoc(b, r)
		cuts = append(cuts, len(b))
		w := row{id: r.ID, time: r.Time, requestID: r.RequestID, keyID: r.KeyID, keyName: r.KeyName, team: r.Team,
			alias: r.Alias, target: r.Target, status: r.Status, kind: r.Kind, stream: r.Stream, cache: r.Cache,
			tokensIn: r.TokensIn, tokensOut: r.TokensOut, costUSD: r.CostUSD, firstTokenMS: r.FirstTokenMS,
			cacheRead: r.CacheReadTokens, cacheWrite: r.CacheWriteTokens, savedUSD: r.SavedUSD, affinity: r.Affinity, wire: r.Wire}
		if w.requestID == w.id {
			w.requestID = ""
		}
		if c != nil {
			w.req, w.ans, w.capN, w.trunc = &c.Request, &c.Answer, &c.Cap, &c.Truncated
		}
		out[i] = w
	}
	*bp = b
	all, at := string(b), 0
	for i := range out {
		out[i].keyMeta, out[i].doc = all[at:cuts[2*i]], all[cuts[2*i]:cuts[2*i+1]]
		at = cuts[2*i+1]
	}
	return out, nil
}

// optimistic runs write, a batch's transaction, first as if every record were new, then,
// when it reports that a record was kept already (and rolled back), again exact, returning
// the ids it inserted: both stores' Write. SQLite counts the rows its inserts made (it keeps
// returned rows in a table of their own); PostgreSQL copies the batch in, which a record
// kept already fails.
func optimistic(write func(exact bool) (bool, error)) error {
	all, err := write(false)
	if err != nil || all {
		return err
	}
	_, err = write(true)
	return err
}

// writeBatch writes rows in one transaction on one connection: insert (which adds the ids
// it inserted to inserted, or reports false when it cannot say them, for optimistic), then
// the rollups of what it inserted, then the commit. Insert has the connection too, for what
// database/sql cannot say (PostgreSQL's COPY).
func (s *sqlStore) writeBatch(ctx context.Context, rows []row, insert func(*sql.Conn, *sql.Tx, map[string]bool) (bool, error)) (bool, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	inserted := make(map[string]bool, len(rows))
	if all, err := insert(conn, tx, inserted); err != nil || !all {
		return false, err
	}
	if err := s.prep.addRollups(ctx, tx, rollupsOf(rows, inserted)); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// docBufs are rowsOf's and pgCopyRows' buffers; one past maxDocBuf (a batch of huge
// records) is let go.
var docBufs = sync.Pool{New: func() any { return new([]byte) }}

const maxDocBuf = 4 << 20

// putDocBuf gives bp back to docBufs, unless it grew past maxDocBuf.
func putDocBuf(bp *[]byte) {
	if cap(*bp) <= maxDocBuf {
		docBufs.Put(bp)
	}
}

func (s *sqlStore) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("logstore: %s: %w", s.d.name, err)
	}
	return nil
}
