package logstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite is the embedded default (sqlite://path): one file in WAL mode, written by one
// process at a time (others wait busy_timeout, then fail), read by any. The driver is pure
// Go (modernc.org/sqlite), so the binary stays static.

func init() {
	register("sqlite", openSQLite)
	// percentile_cont(0.95) over the values > 0, as PostgreSQL computes it.
	sqlite.MustRegisterFunction("sluice_p95", &sqlite.FunctionImpl{
		NArgs:         1,
		Deterministic: true,
		MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) { return &p95{}, nil },
	})
}

// sqliteSchema are the migrations, in order; PRAGMA user_version is how many were applied.
var sqliteSchema = []string{
	`CREATE TABLE sluice_logs (
		id TEXT NOT NULL PRIMARY KEY,
		time_us INTEGER NOT NULL,
		key_id TEXT NOT NULL,
		key_name TEXT NOT NULL,
		key_meta TEXT NOT NULL,
		alias TEXT NOT NULL,
		target TEXT NOT NULL,
		status INTEGER NOT NULL,
		kind TEXT NOT NULL,
		stream INTEGER NOT NULL,
		cache TEXT NOT NULL,
		tokens_in INTEGER NOT NULL,
		tokens_out INTEGER NOT NULL,
		cost_usd REAL NOT NULL,
		first_token_ms REAL NOT NULL,
		doc TEXT NOT NULL,
		content_request TEXT,
		content_answer TEXT,
		content_cap INTEGER,
		content_truncated INTEGER
	);
	CREATE INDEX sluice_logs_time ON sluice_logs (time_us, id);
	CREATE INDEX sluice_logs_key ON sluice_logs (key_id, time_us, id);
	CREATE INDEX sluice_logs_alias ON sluice_logs (alias, time_us, id);
	CREATE INDEX sluice_logs_target ON sluice_logs (target, time_us, id);
	CREATE INDEX sluice_logs_status ON sluice_logs (status, time_us);
	CREATE INDEX sluice_logs_kind ON sluice_logs (kind, time_us);
	CREATE TABLE sluice_logs_meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);`,
	// 2: the audit log (audit.go).
	`CREATE TABLE sluice_audit (
		id TEXT NOT NULL PRIMARY KEY,
		time_us INTEGER NOT NULL,
		user_id TEXT NOT NULL,
		role TEXT NOT NULL,
		action TEXT NOT NULL,
		resource_kind TEXT NOT NULL,
		resource_id TEXT NOT NULL,
		status INTEGER NOT NULL,
		doc TEXT NOT NULL
	);
	CREATE INDEX sluice_audit_time ON sluice_audit (time_us, id);
	CREATE INDEX sluice_audit_user ON sluice_audit (user_id, time_us, id);
	CREATE INDEX sluice_audit_resource ON sluice_audit (resource_kind, resource_id, time_us, id);`,
	// The key's team (issue 37); the records before it belong to none.
	`ALTER TABLE sluice_logs ADD COLUMN team TEXT NOT NULL DEFAULT '';
	CREATE INDEX sluice_logs_team ON sluice_logs (team, time_us, id);`,
	// 4: four B-trees a record instead of nine. Every index is a B-tree insert a record, and
	// those inserts were most of the writer's CPU (the pure-Go SQLite shares the request
	// path's cores). The console's filters are served by:
	//   - the time index, which now carries the columns of the filters with few values
	//     (alias, target, team, status, kind, stream, cache): a filtered page walks it newest
	//     first and tests them in the index, reading the table only for the rows that match
	//     (SQLite defers a table's seek until it needs a column the index lacks);
	//   - the key index (migration 1), for the filter with many values: a key is a small part
	//     of the log, too small to find by walking the time index;
	//   - two partial indexes for the records that went wrong, rare and the ones looked for:
	//     a served record costs them a test of their WHERE, no insert. SQLite uses one only
	//     when the query's WHERE holds the index's own term, so sqlStore.where adds it.
	// The table and the id's unique index (the primary key: each record once, and Get) are
	// the other two. TestSQLitePlans holds every filter to an index.
	`DROP INDEX sluice_logs_time;
	DROP INDEX sluice_logs_alias;
	DROP INDEX sluice_logs_target;
	DROP INDEX sluice_logs_team;
	DROP INDEX sluice_logs_status;
	DROP INDEX sluice_logs_kind;
	CREATE INDEX sluice_logs_time ON sluice_logs (time_us, id, alias, target, team, status, kind, stream, cache);
	CREATE INDEX sluice_logs_status ON sluice_logs (status, time_us, id) WHERE status <> 200;
	CREATE INDEX sluice_logs_kind ON sluice_logs (kind, time_us, id) WHERE kind <> '';`,
	// 5: the provider's prompt cache (issue 46): what /admin/usage sums, and the affinity
	// filter. No index: affinity has three values and is tested on the rows the time index
	// finds, as the other filters with few values are (adding it to that index would rebuild
	// it on every existing file). ADD COLUMN with a constant default rewrites no row; the
	// records before it read 0 and "".
	`ALTER TABLE sluice_logs ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE sluice_logs ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE sluice_logs ADD COLUMN saved_usd REAL NOT NULL DEFAULT 0;
	ALTER TABLE sluice_logs ADD COLUMN affinity TEXT NOT NULL DEFAULT '';`,
	// 6: the client's X-Request-Id, apart from the record's id (issue 47): the gateway makes
	// every record's id, so a reused X-Request-Id no longer makes two requests one record.
	// "" when the client sent none (it got the record's id) and in the records before it
	// (their id was the client's): the index is partial, so only the records whose client
	// named them pay its insert (sqlStore.where adds its term for SQLite to use it).
	`ALTER TABLE sluice_logs ADD COLUMN request_id TEXT NOT NULL DEFAULT '';
	CREATE INDEX sluice_logs_request ON sluice_logs (request_id, time_us, id) WHERE request_id <> '';`,
	// 7: the hourly rollups (rollup.go, issue 50), filled from the records already kept.
	rollupDDL(hourly, "INTEGER", "REAL") + ";\n" + rollupFill("(time_us / 3600000000) * 3600000000", "coalesce(json_extract(doc, '$.wire'), '')"),
	// 8: the index of ?q= (issue 50): FTS5's trigram tokenizer over the captured content, an
	// external-content table (the text is stored once, in sluice_logs), kept by triggers
	// that only the records with content fire; content retention and retention take their
	// text out. sqlStore.where asks it for q of 3 characters or more, then tests the LIKE on
	// the rows it names. (A VACUUM may renumber the rowids: after one, rebuild the index,
	// INSERT INTO sluice_logs_fts(sluice_logs_fts) VALUES ('rebuild').)
	`CREATE VIRTUAL TABLE sluice_logs_fts USING fts5(content_request, content_answer, content='sluice_logs',
		content_rowid='rowid', tokenize='trigram');
	INSERT INTO sluice_logs_fts (rowid, content_request, content_answer)
		SELECT rowid, content_request, content_answer FROM sluice_logs WHERE content_cap IS NOT NULL;
	CREATE TRIGGER sluice_logs_fts_insert AFTER INSERT ON sluice_logs WHEN new.content_cap IS NOT NULL BEGIN
		INSERT INTO sluice_logs_fts (rowid, content_request, content_answer) VALUES (new.rowid, new.content_request, new.content_answer);
	END;
	CREATE TRIGGER sluice_logs_fts_delete AFTER DELETE ON sluice_logs WHEN old.content_cap IS NOT NULL BEGIN
		INSERT INTO sluice_logs_fts (sluice_logs_fts, rowid, content_request, content_answer)
			VALUES ('delete', old.rowid, old.content_request, old.content_answer);
	END;
	CREATE TRIGGER sluice_logs_fts_empty AFTER UPDATE OF content_cap ON sluice_logs
		WHEN old.content_cap IS NOT NULL AND new.content_cap IS NULL BEGIN
		INSERT INTO sluice_logs_fts (sluice_logs_fts, rowid, content_request, content_answer)
			VALUES ('delete', old.rowid, old.content_request, old.content_answer);
	END;`,
	// 9: the daily rollups (rollup.go, issue 50), filled from the hourly ones.
	rollupDDL(daily, "INTEGER", "REAL") + ";\n" + dailyFill(),
	// 10: the emulated batches (batches.go, issue 48): without Redis, they outlive a restart.
	strings.Join(batchDDL("INTEGER", "BLOB"), ";\n"),
	// 11: the content's index filled by insertRows, not by a trigger: a trigger makes every
	// INSERT keep a statement journal, a copy of each page it changes, even when no record
	// carries content (the trigger's WHEN is tested row by row).
	`DROP TRIGGER sluice_logs_fts_insert`,
}

type sqliteStore struct {
	sqlStore
	path string
	opt  Options
	kept contentKept
}

var _ Store = (*sqliteStore)(nil)

const sqliteBusyDefault = 5000 // ms

var sqliteDialect = dialect{
	name:    "sqlite",
	timeCol: "time_us",
	timeArg: func(t time.Time) any { return t.UnixMicro() },
	like:    "LIKE", // case-insensitive for ASCII
	bucket: func(b Bucket) string {
		us := int64(time.Hour / time.Microsecond)
		if b == Day {
			us *= 24
		}
		return fmt.Sprintf("(time_us / %[1]d) * %[1]d", us)
	},
	meta:    "json_extract(key_meta, %s)",
	metaArg: func(name string) any { return `$."` + name + `"` },
	p95:     "sluice_p95(first_token_ms)",
	search: func(q string) (string, any) {
		return "rowid IN (SELECT rowid FROM sluice_logs_fts WHERE sluice_logs_fts MATCH %s)", `"` + strings.ReplaceAll(q, `"`, `""`) + `"`
	},
}

func openSQLite(ctx context.Context, opt Options) (Store, error) {
	rest := opt.URL[len("sqlite://"):]
	path, query, _ := strings.Cut(rest, "?")
	busy := sqliteBusyDefault
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("logstore: %s: %w", opt.URL, err)
	}
	for k := range q {
		if k != "busy_timeout" {
			return nil, fmt.Errorf("logstore: %s: unknown parameter %q (sqlite:// takes busy_timeout)", opt.URL, k)
		}
		if busy, err = strconv.Atoi(q.Get(k)); err != nil || busy < 0 {
			return nil, fmt.Errorf("logstore: %s: busy_timeout is a number of milliseconds", opt.URL)
		}
	}
	if path == "" || path == ":memory:" {
		return nil, fmt.Errorf("logstore: %s: sqlite:// needs a file path (sqlite://./data/logs.db)", opt.URL)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("logstore: %s: %w", opt.URL, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o750); err != nil {
		return nil, fmt.Errorf("logstore: cannot create the folder of the log file: %w", err)
	}
	// A URI filename: the path escaped, so a ? or # in it is a name, not a parameter.
	dsn := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + url.Values{
		"_pragma": {fmt.Sprintf("busy_timeout(%d)", busy), "journal_mode(WAL)", "synchronous(NORMAL)"},
		"_txlock": {"immediate"}, // a write transaction takes the lock at BEGIN, waiting busy_timeout
	}.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("logstore: %s: %w", abs, err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(5 * time.Minute)
	s := &sqliteStore{sqlStore: sqlStore{db: db, d: sqliteDialect, prep: &prepared{db: db}}, path: abs, opt: opt}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, sqliteError(abs, err)
	}
	return s, nil
}

// migrate applies what the file lacks of sqliteSchema, and writes to the file whatever it
// holds: a read-only or locked file fails here, at Open, not at the first write.
func (s *sqliteStore) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v > len(sqliteSchema) {
		return fmt.Errorf("the file has schema version %d, newer than this gateway's (%d)", v, len(sqliteSchema))
	}
	for i := v; i < len(sqliteSchema); i++ {
		if _, err := tx.ExecContext(ctx, sqliteSchema[i]); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		s.opt.Log.Info("log store migrated", "store", "sqlite", "path", s.path, "version", i+1)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(sqliteSchema))); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO sluice_logs_meta (k, v) VALUES ('opened', ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v",
		time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
		return err
	}
	return tx.Commit()
}

// sqliteError says in words what an SQLite failure at Open means.
func sqliteError(path string, err error) error {
	var e *sqlite.Error
	if errors.As(err, &e) {
		switch e.Code() & 0xff {
		case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM:
			return fmt.Errorf("logstore: the log file %s is read-only (logs.url must name a file this process can write): %w", path, err)
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return fmt.Errorf("logstore: the log file %s is locked by another process (waited busy_timeout): %w", path, err)
		case sqlite3.SQLITE_CANTOPEN:
			return fmt.Errorf("logstore: cannot open the log file %s: %w", path, err)
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("logstore: %s is not an SQLite database: %w", path, err)
		}
	}
	return fmt.Errorf("logstore: the log file %s: %w", path, err)
}

// sqliteInsert is the insert of n rows in one statement; returning, it answers the ids of
// the rows it inserted.
func sqliteInsert(n int, returning bool) string {
	// OR IGNORE, not ON CONFLICT (id) DO NOTHING: a constraint that may abort a statement of
	// many rows makes SQLite keep a statement journal, a copy of every page it changes (5% of
	// the writer's CPU). The columns' NOT NULL never fails (every value is bound), so only the
	// id's uniqueness ever ignores a row, as DO NOTHING did.
	var b strings.Builder
	b.WriteString(`INSERT OR IGNORE INTO sluice_logs (id, time_us, key_id, key_name, key_meta, alias, target, status, kind,
	stream, cache, tokens_in, tokens_out, cost_usd, first_token_ms, doc, content_request, content_answer,
	content_cap, content_truncated, team, cache_read_tokens, cache_write_tokens, saved_usd, affinity, request_id) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
	}
	if returning {
		b.WriteString(" RETURNING id") // the rows inserted: what the rollups add
	}
	return b.String()
}

// insertRows is how many rows one INSERT carries: database/sql's and the VDBE's cost of a
// statement is paid once for them, not once a row (some 15% of the writer's CPU a row at a
// time). 16 × sqliteCols parameters stay far below SQLite's limit. A batch's last rows go
// in 8, 4, 2 and 1 (chunk): five statements of each kind, each prepared once.
const insertRows = 16

// sqliteCols is how many columns sqliteInsert writes a row.
const sqliteCols = 26

// yieldAfter is how long a batch's inserts run before their goroutine yields. An insert
// costs some 20 µs of CPU in the pure-Go SQLite and a batch is up to 500 of them, all on one
// of the process's Ps: the yields let the requests that wait run within a millisecond
// instead of after the scheduler's 10 ms slice. A yield wakes an idle P's thread when there
// is one (a futex each), 6% of the writer's CPU when it yielded every statement: so it
// yields between statements once the time is up, every third or so.
const yieldAfter = time.Millisecond

func (s *sqliteStore) Write(ctx context.Context, rs []Record) error {
	if len(rs) == 0 {
		return nil
	}
	rows, err := rowsOf(rs)
	if err != nil {
		return err
	}
	// Without RETURNING first: the rows SQLite returns cost some 10% of the writer's CPU.
	err = optimistic(func(exact bool) (bool, error) {
		return s.writeBatch(ctx, rows, func(_ *sql.Conn, tx *sql.Tx, inserted map[string]bool) (bool, error) {
			return s.insertRows(ctx, tx, rows, inserted, exact)
		})
	})
	if err != nil {
		return fmt.Errorf("logstore: sqlite write: %w", err)
	}
	return nil
}

// insertRows inserts rows within tx and adds the ids it inserted to inserted (a record
// already kept is skipped): Write's inserts, and the usage benchmark's bulk load. Unless
// exact, it only counts them: it stops and reports false at the first statement that
// skipped a row, not knowing which, and the caller rolls back.
func (s *sqliteStore) insertRows(ctx context.Context, tx *sql.Tx, rows []row, inserted map[string]bool, exact bool) (bool, error) {
	name := "insert"
	if exact {
		name = "insert returning"
	}
	args := make([]any, 0, sqliteCols*insertRows)
	ran := time.Now()
	for left := rows; len(left) > 0; {
		if len(left) < len(rows) && time.Since(ran) >= yieldAfter {
			runtime.Gosched()
			ran = time.Now()
		}
		n := chunk(insertRows, len(left))
		args = args[:0]
		for _, w := range left[:n] {
			// driver.Value's own types (int64, a nil any): database/sql converts others, a nil
			// pointer through reflection.
			var req, ans, capN, trunc any
			if w.req != nil {
				req, ans, capN, trunc = *w.req, *w.ans, int64(*w.capN), *w.trunc
			}
			args = append(args, w.id, w.time.UnixMicro(), w.keyID, w.keyName, w.keyMeta, w.alias, w.target,
				int64(w.status), w.kind, w.stream, w.cache, int64(w.tokensIn), int64(w.tokensOut), w.costUSD,
				w.firstTokenMS, w.doc, req, ans, capN, trunc, w.team, int64(w.cacheRead), int64(w.cacheWrite), w.savedUSD, w.affinity, w.requestID)
		}
		// Prepared once per size on each connection (prepared): a batch compiles no insert.
		st, err := s.prep.stmt(ctx, name, n, func(n int) string { return sqliteInsert(n, exact) })
		if err != nil {
			return false, err
		}
		st = tx.StmtContext(ctx, st)
		if !exact {
			res, err := st.ExecContext(ctx, args...)
			if err != nil {
				return false, err
			}
			if c, err := res.RowsAffected(); err != nil || c != int64(n) {
				return false, err
			}
			for _, w := range left[:n] {
				inserted[w.id] = true
			}
		} else {
			ids, err := st.QueryContext(ctx, args...)
			if err == nil {
				err = scanIDs(ids, inserted)
			}
			if err != nil {
				return false, err
			}
		}
		left = left[n:]
	}
	return true, s.indexContent(ctx, tx, rows, inserted)
}

// ftsInsert adds a record's content to the index of ?q= (the external-content table reads
// it from the record's row).
const ftsInsert = `INSERT INTO sluice_logs_fts (rowid, content_request, content_answer)
	SELECT rowid, content_request, content_answer FROM sluice_logs WHERE id = ?`

// indexContent adds the captured content of the rows inserted to the index of ?q=
// (migration 11): the records kept already are in it.
func (s *sqliteStore) indexContent(ctx context.Context, tx *sql.Tx, rows []row, inserted map[string]bool) error {
	var st *sql.Stmt
	for _, w := range rows {
		if w.req == nil || !inserted[w.id] {
			continue
		}
		if st == nil {
			var err error
			if st, err = s.prep.stmt(ctx, "fts", 1, func(int) string { return ftsInsert }); err != nil {
				return err
			}
			st = tx.StmtContext(ctx, st)
		}
		if _, err := st.ExecContext(ctx, w.id); err != nil {
			return err
		}
	}
	return nil
}

// Retain deletes the records of the days that ended before now minus the retention, empties
// the content of those older than the content retention, and deletes the rollups past
// theirs, a chunk at a time so that writes wait at most one chunk.
func (s *sqliteStore) Retain(ctx context.Context, now time.Time) error {
	cutoff := day(now.Add(-s.opt.Retention)).UnixMicro()
	chunked := func(stmt string, args ...any) (int64, error) {
		total := int64(0)
		for {
			res, err := s.db.ExecContext(ctx, stmt, args...)
			if err != nil {
				return total, fmt.Errorf("logstore: sqlite retention: %w", err)
			}
			n, _ := res.RowsAffected()
			total += n
			if n == 0 {
				return total, nil
			}
		}
	}
	total, err := chunked("DELETE FROM sluice_logs WHERE rowid IN (SELECT rowid FROM sluice_logs WHERE time_us < ? LIMIT 5000)", cutoff)
	if err != nil {
		return err
	}
	if total > 0 {
		s.opt.Log.Info("log store retention", "store", "sqlite", "deleted", total, "before", time.UnixMicro(cutoff).UTC())
	}
	from, to := s.kept.span(now.Add(-s.opt.ContentRetention))
	emptied, err := chunked(`UPDATE sluice_logs SET content_request = NULL, content_answer = NULL, content_cap = NULL,
		content_truncated = NULL WHERE rowid IN (SELECT rowid FROM sluice_logs WHERE time_us >= ? AND time_us < ?
		AND content_cap IS NOT NULL LIMIT 5000)`, from.UnixMicro(), to.UnixMicro())
	if err != nil {
		return err
	}
	s.kept.done(to)
	if emptied > 0 {
		s.opt.Log.Info("log store content retention", "store", "sqlite", "emptied", emptied, "before", to)
	}
	rollCut := day(now.Add(-s.opt.RollupRetention)).UnixMicro()
	for _, l := range []level{hourly, daily} {
		if _, err := chunked("DELETE FROM "+l.table+" WHERE rowid IN (SELECT rowid FROM "+l.table+" WHERE "+l.col+" < ? LIMIT 5000)", rollCut); err != nil {
			return err
		}
	}
	return s.sweepBatches(ctx)
}

func (s *sqliteStore) Close() error {
	s.prep.close()
	return s.db.Close()
}

// p95 is the sluice_p95 aggregate: percentile_cont(0.95) of the values > 0 (NULL and 0, "no
// first token", are left out), NULL when there are none.
type p95 struct{ v []float64 }

func (p *p95) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	var f float64
	switch x := args[0].(type) {
	case float64:
		f = x
	case int64:
		f = float64(x)
	default:
		return nil
	}
	if f > 0 && !math.IsNaN(f) {
		p.v = append(p.v, f)
	}
	return nil
}

func (p *p95) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return errors.New("sluice_p95 is not a window function")
}

func (p *p95) WindowValue(*sqlite.FunctionContext) (driver.Value, error) {
	if len(p.v) == 0 {
		return nil, nil
	}
	return percentile(p.v, 0.95), nil
}

func (p *p95) Final(*sqlite.FunctionContext) {}

// percentile is percentile_cont(q) of v (sorted in place): linear interpolation between the
// two nearest ranks.
func percentile(v []float64, q float64) float64 {
	slices.Sort(v)
	pos := q * float64(len(v)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return v[lo] + (v[hi]-v[lo])*(pos-float64(lo))
}
