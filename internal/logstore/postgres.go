package logstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// PostgreSQL serves fleets (postgres:// or postgresql://): one table partitioned by UTC day
// (declarative partitioning on time), partitions made ahead (today and the next two days, at
// Open, at Retain and whenever a write needs one), retention by dropping whole partitions.
// Every replica may Open at once: migrations run under an advisory lock and are recorded in
// sluice_logs_schema; partitions are made and dropped under another.
//
// The unique key is (id, time): PostgreSQL wants the partition key in it. A record is written
// again with the same time (the writer keeps it), so the key refuses it: a batch is copied in
// (pgcopy.go), and one that meets a record kept already is inserted again with ON CONFLICT DO
// NOTHING, which keeps it once.

func init() {
	register("postgres", openPostgres)
	register("postgresql", openPostgres)
}

// Advisory lock keys ("sluicelg" and "sluicepr" as big-endian int64): migrations, partitions.
const (
	lockMigrate = int64(0x736c7569_63656c67)
	lockParts   = int64(0x736c7569_63657072)
)

// aheadDays is how many days after today have a partition ready.
const aheadDays = 2

// pgSchema are the migrations, in order; sluice_logs_schema holds the versions applied.
// Indexes: the primary key serves Get (id first); (time, id) the newest-first pages and their
// keyset; BRIN on time the long range scans of usage; the others one filter each, with the
// keyset after it so a filtered page is one index scan per partition.
var pgSchema = [][]string{
	{
		`CREATE TABLE sluice_logs (
			id text NOT NULL,
			time timestamptz NOT NULL,
			key_id text NOT NULL,
			key_name text NOT NULL,
			key_meta jsonb NOT NULL,
			alias text NOT NULL,
			target text NOT NULL,
			status integer NOT NULL,
			kind text NOT NULL,
			stream boolean NOT NULL,
			cache text NOT NULL,
			tokens_in bigint NOT NULL,
			tokens_out bigint NOT NULL,
			cost_usd double precision NOT NULL,
			first_token_ms double precision NOT NULL,
			doc text NOT NULL,
			content_request text,
			content_answer text,
			content_cap integer,
			content_truncated boolean,
			PRIMARY KEY (id, time)
		) PARTITION BY RANGE (time)`,
		`CREATE INDEX sluice_logs_time ON sluice_logs (time, id)`,
		`CREATE INDEX sluice_logs_time_brin ON sluice_logs USING brin (time)`,
		`CREATE INDEX sluice_logs_key ON sluice_logs (key_id, time, id)`,
		`CREATE INDEX sluice_logs_alias ON sluice_logs (alias, time, id)`,
		`CREATE INDEX sluice_logs_target ON sluice_logs (target, time, id)`,
		`CREATE INDEX sluice_logs_status ON sluice_logs (status, time)`,
		`CREATE INDEX sluice_logs_kind ON sluice_logs (kind, time) WHERE kind <> ''`,
	},
	{ // the audit log (audit.go): small, one table, never dropped by retention
		`CREATE TABLE sluice_audit (
			id text PRIMARY KEY,
			time timestamptz NOT NULL,
			user_id text NOT NULL,
			role text NOT NULL,
			action text NOT NULL,
			resource_kind text NOT NULL,
			resource_id text NOT NULL,
			status integer NOT NULL,
			doc text NOT NULL
		)`,
		`CREATE INDEX sluice_audit_time ON sluice_audit (time, id)`,
		`CREATE INDEX sluice_audit_user ON sluice_audit (user_id, time, id)`,
		`CREATE INDEX sluice_audit_resource ON sluice_audit (resource_kind, resource_id, time, id)`,
	},
	{ // the key's team (issue 37); the records before it belong to none
		`ALTER TABLE sluice_logs ADD COLUMN team text NOT NULL DEFAULT ''`,
		`CREATE INDEX sluice_logs_team ON sluice_logs (team, time, id)`,
	},
	{ // the provider's prompt cache (issue 46): what /admin/usage sums, and the affinity
		// filter (three values: no index of its own, the time index's rows are tested). A
		// constant default adds a column without rewriting a partition; the records before
		// it read 0 and ''.
		`ALTER TABLE sluice_logs ADD COLUMN cache_read_tokens bigint NOT NULL DEFAULT 0`,
		`ALTER TABLE sluice_logs ADD COLUMN cache_write_tokens bigint NOT NULL DEFAULT 0`,
		`ALTER TABLE sluice_logs ADD COLUMN saved_usd double precision NOT NULL DEFAULT 0`,
		`ALTER TABLE sluice_logs ADD COLUMN affinity text NOT NULL DEFAULT ''`,
	},
	{ // the client's X-Request-Id, apart from the record's id (issue 47): "" when the client
		// sent none (it got the record's id) and in the records before it (their id was the
		// client's). A constant default rewrites no partition; the index, made on the parent,
		// is made on every partition, and is partial: only records a client named pay it.
		`ALTER TABLE sluice_logs ADD COLUMN request_id text NOT NULL DEFAULT ''`,
		`CREATE INDEX sluice_logs_request ON sluice_logs (request_id, time, id) WHERE request_id <> ''`,
	},
	{ // the hourly rollups (rollup.go, issue 50), filled from the records already kept
		rollupDDL(hourly, "bigint", "double precision"),
		rollupFill(pgDialect.bucket(Hour), "coalesce(doc::jsonb->>'wire', '')"),
	},
	{ // the index of ?q= (issue 50): pg_trgm's GIN over the captured content, which ILIKE
		// '%...%' uses for 3 characters or more. pg_trgm is in Debian's postgresql-contrib and
		// trusted (a database owner may create it); where it is missing the log works, and a
		// search reads the rows.
		`DO $$ BEGIN
			CREATE EXTENSION IF NOT EXISTS pg_trgm;
		EXCEPTION WHEN OTHERS THEN
			RAISE NOTICE 'pg_trgm is not available: ?q= reads the rows (%)', SQLERRM;
		END $$`,
		`DO $$ BEGIN
			IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
				CREATE INDEX sluice_logs_content ON sluice_logs USING gin (content_request gin_trgm_ops, content_answer gin_trgm_ops);
			END IF;
		END $$`,
	},
	{ // the daily rollups (rollup.go, issue 50), filled from the hourly ones
		rollupDDL(daily, "bigint", "double precision"),
		dailyFill(),
	},
	{ // ?q= through its index (issue 50): the planner never used the GIN of migration 7, since
		// a search is an OR over its two columns, which it costs as two GIN scans above a scan
		// of the day's rows. One GIN over one expression, the text of both, serves one ILIKE
		// (pgText, pgDialect.search); the ILIKE of each column then tests the rows it names.
		`DO $$ BEGIN
			IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
				DROP INDEX IF EXISTS sluice_logs_content;
				CREATE INDEX sluice_logs_text ON sluice_logs USING gin ((` + pgText + `) gin_trgm_ops);
			END IF;
		END $$`,
	},
	batchDDL("bigint", "bytea"), // the emulated batches (batches.go, issue 48), shared by the fleet
}

// pgText is the text ?q= searches, as its index holds it: the request and the answer, a line
// apart. The search's condition must be this expression to the letter for the planner to use
// the index.
const pgText = `coalesce(content_request, '') || E'\n' || coalesce(content_answer, '')`

type pgStore struct {
	sqlStore
	opt  Options
	log  *slog.Logger
	kept contentKept

	mu    sync.Mutex
	parts map[time.Time]bool // days known to have a partition
}

var _ Store = (*pgStore)(nil)

var pgDialect = dialect{
	name:    "postgres",
	timeCol: "time",
	timeArg: func(t time.Time) any { return t },
	like:    "ILIKE",
	dollar:  true,
	bucket: func(b Bucket) string {
		return fmt.Sprintf("CAST(extract(epoch FROM date_trunc('%s', time, 'UTC')) * 1000000 AS BIGINT)", b)
	},
	meta:    "key_meta->>%s",
	metaArg: func(name string) any { return name },
	p95:     "percentile_cont(0.95) WITHIN GROUP (ORDER BY first_token_ms) FILTER (WHERE first_token_ms > 0)",
	search: func(q string) (string, any) {
		return "(" + pgText + `) ILIKE %s ESCAPE '\'`, "%" + escapeLike(q) + "%"
	},
}

func openPostgres(ctx context.Context, opt Options) (Store, error) {
	cfg, err := pgx.ParseConfig(opt.URL)
	if err != nil {
		return nil, fmt.Errorf("logstore: postgres URL %s: %w", redactURL(opt.URL), err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 5 * time.Second
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(10)
	db.SetMaxIdleConns(10)
	db.SetConnMaxIdleTime(5 * time.Minute)
	s := &pgStore{sqlStore: sqlStore{db: db, d: pgDialect, prep: &prepared{db: db, dollar: true}}, opt: opt, log: opt.Log, parts: map[time.Time]bool{}}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("logstore: postgres %s: %w", cfg.Host, err)
	}
	today := day(time.Now())
	if err := s.ensure(ctx, s.ahead(today)); err != nil {
		db.Close()
		return nil, fmt.Errorf("logstore: postgres %s: %w", cfg.Host, err)
	}
	return s, nil
}

// ahead is today and the aheadDays after it.
func (s *pgStore) ahead(today time.Time) []time.Time {
	days := make([]time.Time, 0, aheadDays+1)
	for i := range aheadDays + 1 {
		days = append(days, today.AddDate(0, 0, i))
	}
	return days
}

// migrate applies the migrations the database lacks, holding the migrations' advisory lock
// on one connection: replicas starting at once wait for each other, and the second finds the
// work done.
func (s *pgStore) migrate(ctx context.Context) (err error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", lockMigrate); err != nil {
		return fmt.Errorf("taking the migration lock: %w", err)
	}
	defer func() {
		if _, uerr := conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", lockMigrate); uerr != nil {
			// The lock lives as long as the session: close the connection rather than give it
			// back to the pool holding it.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS sluice_logs_schema (
		version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return err
	}
	var v int
	if err := conn.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM sluice_logs_schema").Scan(&v); err != nil {
		return err
	}
	if v > len(pgSchema) {
		return fmt.Errorf("the database has schema version %d, newer than this gateway's (%d)", v, len(pgSchema))
	}
	for i := v; i < len(pgSchema); i++ {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		for _, stmt := range pgSchema[i] {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				tx.Rollback()
				return fmt.Errorf("migration %d: %w", i+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO sluice_logs_schema (version) VALUES ($1)", i+1); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		s.log.Info("log store migrated", "store", "postgres", "version", i+1)
	}
	return nil
}

// partName is the partition of day d.
func partName(d time.Time) string { return table + "_" + d.Format("20060102") }

// ensure makes the partitions of days that are not known to exist.
func (s *pgStore) ensure(ctx context.Context, days []time.Time) error {
	s.mu.Lock()
	var missing []time.Time
	for _, d := range days {
		if !s.parts[d] && !containsDay(missing, d) {
			missing = append(missing, d)
		}
	}
	s.mu.Unlock()
	if len(missing) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("creating partitions: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", lockParts); err != nil {
		return fmt.Errorf("creating partitions: %w", err)
	}
	for _, d := range missing {
		stmt := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s PARTITION OF %s FOR VALUES FROM ('%s') TO ('%s')",
			partName(d), table, d.Format(time.RFC3339), d.AddDate(0, 0, 1).Format(time.RFC3339))
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("creating partition %s: %w", partName(d), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("creating partitions: %w", err)
	}
	s.mu.Lock()
	for _, d := range missing {
		s.parts[d] = true
	}
	s.mu.Unlock()
	return nil
}

func containsDay(days []time.Time, d time.Time) bool {
	for _, x := range days {
		if x.Equal(d) {
			return true
		}
	}
	return false
}

// pgWritten are the columns a batch writes, in the order of pgInsert's arrays (pgColumns)
// and of pgCopy's fields (appendCopy).
const pgWritten = `id, time, key_id, key_name, key_meta, alias, target, status, kind, stream, cache,
	tokens_in, tokens_out, cost_usd, first_token_ms, doc, content_request, content_answer, content_cap,
	content_truncated, team, cache_read_tokens, cache_write_tokens, saved_usd, affinity, request_id`

// pgInsert is the insert of the exact path (pgInsertRows): it takes the batch as one array a
// column (unnest: one statement, one round trip, the plan cached on the connection). Each
// array is of a type pgx encodes without reflection ([]string, []int32...: a slice of
// pointers would cost a reflect call an element): a record without content has noContent
// for its cap, and NULL in its four content columns.
const pgInsert = `INSERT INTO sluice_logs (` + pgWritten + `)
	SELECT id, time, key_id, key_name, key_meta::jsonb, alias, target, status, kind, stream, cache, tokens_in,
		tokens_out, cost_usd, first_token_ms, doc, CASE WHEN cap <> -2147483648 THEN req END,
		CASE WHEN cap <> -2147483648 THEN ans END, nullif(cap, -2147483648), CASE WHEN cap <> -2147483648 THEN trunc END, team,
		cache_read, cache_write, saved, affinity, request_id
	FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
		$8::integer[], $9::text[], $10::boolean[], $11::text[], $12::bigint[], $13::bigint[], $14::float8[],
		$15::float8[], $16::text[], $17::text[], $18::text[], $19::integer[], $20::boolean[], $21::text[],
		$22::bigint[], $23::bigint[], $24::float8[], $25::text[], $26::text[])
		AS u(id, time, key_id, key_name, key_meta, alias, target, status, kind, stream, cache, tokens_in,
			tokens_out, cost_usd, first_token_ms, doc, req, ans, cap, trunc, team, cache_read, cache_write, saved, affinity, request_id)
	ON CONFLICT DO NOTHING`

// noContent is pgInsert's cap of a record without content (no cap is that).
const noContent = math.MinInt32

// Write copies the batch in (pgcopy.go), after making the partitions of its days, and adds
// what it inserted to the rollups in the same transaction; a batch with a record kept
// already is inserted again, skipping those.
func (s *pgStore) Write(ctx context.Context, rs []Record) error {
	if len(rs) == 0 {
		return nil
	}
	rows, err := rowsOf(rs)
	if err != nil {
		return err
	}
	days := rowDays(rows)
	write := func(exact bool) (bool, error) {
		if err := s.ensure(ctx, days); err != nil {
			return false, err
		}
		return s.writeBatch(ctx, rows, func(conn *sql.Conn, tx *sql.Tx, inserted map[string]bool) (bool, error) {
			if !exact {
				return pgCopyRows(ctx, conn, rows, inserted)
			}
			return true, pgInsertRows(ctx, tx, pgColumns(rows), inserted)
		})
	}
	err = optimistic(write)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23514" && strings.Contains(pe.Message, "no partition") {
		// Another replica's retention dropped a partition this one still knew: forget them all.
		s.mu.Lock()
		s.parts = map[time.Time]bool{}
		s.mu.Unlock()
		err = optimistic(write)
	}
	if err != nil {
		return fmt.Errorf("logstore: postgres write: %w", err)
	}
	return nil
}

// rowDays are the days rows fall on, whose partitions must exist.
func rowDays(rows []row) (days []time.Time) {
	for i := range rows {
		if d := day(rows[i].time); !containsDay(days, d) {
			days = append(days, d)
		}
	}
	return days
}

// pgColumns are rows as pgInsert's arguments, one array a column.
func pgColumns(rows []row) []any {
	n := len(rows)
	// The text columns share one backing array, as do the others of a type.
	strs := make([]string, 14*n)
	col := func(i int) []string { return strs[i*n : (i+1)*n : (i+1)*n] }
	ids, keyIDs, keyNames, metas, aliases, targets, kinds := col(0), col(1), col(2), col(3), col(4), col(5), col(6)
	caches, docs, reqs, anss, teams, affs, rids := col(7), col(8), col(9), col(10), col(11), col(12), col(13)
	ints := make([]int32, 2*n)
	statuses, caps := ints[:n:n], ints[n:]
	bigs := make([]int64, 4*n)
	tin, tout, cread, cwrite := bigs[:n:n], bigs[n:2*n:2*n], bigs[2*n:3*n:3*n], bigs[3*n:]
	floats := make([]float64, 3*n)
	costs, ftms, saved := floats[:n:n], floats[n:2*n:2*n], floats[2*n:]
	bools := make([]bool, 2*n)
	streams, truncs := bools[:n:n], bools[n:]
	times := make([]time.Time, n)
	for i, w := range rows {
		ids[i], times[i], keyIDs[i], keyNames[i], metas[i], aliases[i], targets[i] = w.id, w.time, w.keyID, w.keyName, w.keyMeta, w.alias, w.target
		statuses[i], kinds[i], streams[i], caches[i], tin[i], tout[i] = int32(w.status), w.kind, w.stream, w.cache, int64(w.tokensIn), int64(w.tokensOut)
		costs[i], ftms[i], docs[i], teams[i] = w.costUSD, w.firstTokenMS, w.doc, w.team
		cread[i], cwrite[i], saved[i], affs[i], rids[i] = int64(w.cacheRead), int64(w.cacheWrite), w.savedUSD, w.affinity, w.requestID
		caps[i] = noContent
		if w.capN != nil {
			reqs[i], anss[i], caps[i], truncs[i] = *w.req, *w.ans, int32(*w.capN), *w.trunc
		}
	}
	return []any{ids, times, keyIDs, keyNames, metas, aliases, targets, statuses, kinds, streams, caches, tin, tout,
		costs, ftms, docs, reqs, anss, caps, truncs, teams, cread, cwrite, saved, affs, rids}
}

// pgInsertRows runs pgInsert ... RETURNING id within tx over cols (pgColumns) and adds the
// ids it inserted to inserted (a record already kept is skipped): Write's exact path, after
// a COPY met a record kept already, and the usage benchmark's bulk load.
func pgInsertRows(ctx context.Context, tx *sql.Tx, cols []any, inserted map[string]bool) error {
	res, err := tx.QueryContext(ctx, pgInsert+" RETURNING id", cols...)
	if err != nil {
		return err
	}
	return scanIDs(res, inserted)
}

// Retain drops the partitions of the days that ended before now minus the retention, and
// makes today's and the next days'.
func (s *pgStore) Retain(ctx context.Context, now time.Time) error {
	if err := s.ensure(ctx, s.ahead(day(now))); err != nil {
		return fmt.Errorf("logstore: postgres retention: %w", err)
	}
	cutoff := day(now.Add(-s.opt.Retention))
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("logstore: postgres retention: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", lockParts); err != nil {
		return fmt.Errorf("logstore: postgres retention: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = $1::regclass`, table)
	if err != nil {
		return fmt.Errorf("logstore: postgres retention: %w", err)
	}
	var drop []string
	var dropped []time.Time
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return fmt.Errorf("logstore: postgres retention: %w", err)
		}
		d, err := time.Parse("20060102", strings.TrimPrefix(name, table+"_"))
		if err != nil || !strings.HasPrefix(name, table+"_") {
			continue // not one of ours
		}
		if !d.AddDate(0, 0, 1).After(cutoff) {
			drop = append(drop, name)
			dropped = append(dropped, d)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("logstore: postgres retention: %w", err)
	}
	for _, name := range drop {
		if _, err := tx.ExecContext(ctx, "DROP TABLE IF EXISTS "+pgx.Identifier{name}.Sanitize()); err != nil {
			return fmt.Errorf("logstore: postgres retention: dropping %s: %w", name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("logstore: postgres retention: %w", err)
	}
	s.mu.Lock()
	for _, d := range dropped {
		delete(s.parts, d)
	}
	s.mu.Unlock()
	if len(drop) > 0 {
		s.log.Info("log store retention", "store", "postgres", "dropped", strings.Join(drop, ","), "before", cutoff)
	}
	from, to := s.kept.span(now.Add(-s.opt.ContentRetention))
	res, err := s.db.ExecContext(ctx, `UPDATE sluice_logs SET content_request = NULL, content_answer = NULL, content_cap = NULL,
		content_truncated = NULL WHERE time >= $1 AND time < $2 AND content_cap IS NOT NULL`, from, to)
	if err != nil {
		return fmt.Errorf("logstore: postgres content retention: %w", err)
	}
	s.kept.done(to)
	if n, _ := res.RowsAffected(); n > 0 {
		s.log.Info("log store content retention", "store", "postgres", "emptied", n, "before", to)
	}
	rollCut := day(now.Add(-s.opt.RollupRetention)).UnixMicro()
	for _, l := range []level{hourly, daily} {
		if _, err := s.db.ExecContext(ctx, "DELETE FROM "+l.table+" WHERE "+l.col+" < $1", rollCut); err != nil {
			return fmt.Errorf("logstore: postgres rollup retention: %w", err)
		}
	}
	return s.sweepBatches(ctx)
}

func (s *pgStore) Close() error {
	s.prep.close()
	return s.db.Close()
}
