package logstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// The emulated batches' store (issue 48) in the log's database, for a gateway without Redis:
// a batch's files, records, claims, answers and tally outlive a restart of the replica, and,
// on PostgreSQL, every replica sharing the database runs every batch. Batches satisfies
// batch.Store (internal/batch) method for method, its tally in BatchTally; this package
// imports none of the module's packages above llm, so the gateway converts the tally.
//
//	sluice_batch_chunks    (file, n)     chunk n of a file's content
//	sluice_batch_objects   (id)          a file's or batch's record
//	sluice_batch_index     (list, id)    ids by creation time
//	sluice_batch_progress  (batch)       the next part never claimed, the tally
//	sluice_batch_parts     (batch, part) a part's lease end, or done
//	sluice_batch_answers   (batch, line) a line's result
//
// Every row carries its expiry (expires_us, the database's clock in µs since the epoch):
// reads leave the expired rows out, and Retain deletes them. Leases are on the database's
// clock too, so replicas whose clocks differ agree on them.

// batchDDL are the batches' tables, with the integer and bytes types of a store.
func batchDDL(integer, blob string) []string {
	return []string{
		`CREATE TABLE sluice_batch_chunks (file text NOT NULL, n integer NOT NULL, body ` + blob + ` NOT NULL,
			expires_us ` + integer + ` NOT NULL, PRIMARY KEY (file, n))`,
		`CREATE TABLE sluice_batch_objects (id text NOT NULL PRIMARY KEY, rec ` + blob + ` NOT NULL,
			expires_us ` + integer + ` NOT NULL)`,
		`CREATE TABLE sluice_batch_index (list text NOT NULL, id text NOT NULL, at ` + integer + ` NOT NULL,
			expires_us ` + integer + ` NOT NULL, PRIMARY KEY (list, id))`,
		`CREATE TABLE sluice_batch_progress (batch text NOT NULL PRIMARY KEY, next integer NOT NULL,
			completed ` + integer + ` NOT NULL, failed ` + integer + ` NOT NULL, tokens_in ` + integer + ` NOT NULL,
			tokens_out ` + integer + ` NOT NULL, expires_us ` + integer + ` NOT NULL)`,
		`CREATE TABLE sluice_batch_parts (batch text NOT NULL, part integer NOT NULL, lease_us ` + integer + `,
			done integer NOT NULL, expires_us ` + integer + ` NOT NULL, PRIMARY KEY (batch, part))`,
		`CREATE TABLE sluice_batch_answers (batch text NOT NULL, line integer NOT NULL, result ` + blob + ` NOT NULL,
			expires_us ` + integer + ` NOT NULL, PRIMARY KEY (batch, line))`,
	}
}

// batchTables are the tables Retain sweeps.
var batchTables = []string{"sluice_batch_chunks", "sluice_batch_objects", "sluice_batch_index",
	"sluice_batch_progress", "sluice_batch_parts", "sluice_batch_answers"}

// BatchTally is a batch's tally, field for field batch.Tally (the gateway converts).
type BatchTally struct {
	Completed, Failed         int64
	InputTokens, OutputTokens int64
}

// Batches is the emulated batches' store on the log's database. Safe for concurrent use; it
// shares the log store's connections, and closes with it.
type Batches struct {
	s   *sqlStore
	ttl int64 // µs
}

// Batches returns the emulated batches' store on s's database, keeping what it writes for ttl.
func (s *sqlStore) Batches(ttl time.Duration) *Batches {
	return &Batches{s: s, ttl: ttl.Microseconds()}
}

// BatchHost is a log store that keeps the emulated batches too: both SQL stores.
type BatchHost interface {
	Batches(ttl time.Duration) *Batches
}

var (
	_ BatchHost = (*sqliteStore)(nil)
	_ BatchHost = (*pgStore)(nil)
)

// batchSQL is stmt in the store's dialect: "?" its placeholders, "@now" the database's clock in µs.
func (s *sqlStore) batchSQL(stmt string) string {
	now := "CAST(unixepoch('subsec') * 1000000 AS INTEGER)"
	if s.d.dollar {
		now = "CAST(extract(epoch FROM clock_timestamp()) * 1000000 AS BIGINT)"
	}
	stmt = strings.ReplaceAll(stmt, "@now", now)
	if !s.d.dollar {
		return stmt
	}
	var b strings.Builder
	n := 0
	for _, r := range stmt {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// batchUnavailable is a failure of the database as the batches' host sees it: an
// llm.Unavailable error (503), its text naming no address.
func batchUnavailable(err error) error {
	if err == nil {
		return nil
	}
	return &llm.Error{Kind: llm.Unavailable, Status: http.StatusServiceUnavailable, Code: "store_unavailable",
		Type: "server_error", Message: "the gateway cannot reach the store of its batches (the log's database)", Err: err}
}

// querier is a pool or a transaction.
type querier interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// exec runs stmt on q and returns the rows it changed.
func (b *Batches) exec(ctx context.Context, q querier, stmt string, args ...any) (int64, error) {
	res, err := q.ExecContext(ctx, b.s.batchSQL(stmt), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// bytes reads the one bytes column of stmt's row: nil, nil when there is none.
func (b *Batches) bytes(ctx context.Context, stmt string, args ...any) ([]byte, error) {
	var v []byte
	err := b.s.db.QueryRowContext(ctx, b.s.batchSQL(stmt), args...).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err == nil && v == nil {
		v = []byte{} // kept, and empty
	}
	return v, batchUnavailable(err)
}

// tx runs fn in one transaction (on SQLite, BEGIN IMMEDIATE: the file's write lock).
func (b *Batches) tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := b.s.db.BeginTx(ctx, nil)
	if err != nil {
		return batchUnavailable(err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return batchUnavailable(err)
	}
	return batchUnavailable(tx.Commit())
}

func (b *Batches) PutChunk(ctx context.Context, file string, n int, p []byte) error {
	_, err := b.exec(ctx, b.s.db, `INSERT INTO sluice_batch_chunks (file, n, body, expires_us) VALUES (?, ?, ?, @now + ?)
		ON CONFLICT (file, n) DO UPDATE SET body = excluded.body, expires_us = excluded.expires_us`, file, n, nonNil(p), b.ttl)
	return batchUnavailable(err)
}

func (b *Batches) Chunk(ctx context.Context, file string, n int) ([]byte, error) {
	return b.bytes(ctx, "SELECT body FROM sluice_batch_chunks WHERE file = ? AND n = ? AND expires_us > @now", file, n)
}

func (b *Batches) DropChunks(ctx context.Context, file string, n int) error {
	_, err := b.exec(ctx, b.s.db, "DELETE FROM sluice_batch_chunks WHERE file = ? AND n < ?", file, n)
	return batchUnavailable(err)
}

func (b *Batches) Put(ctx context.Context, id string, rec []byte) error {
	_, err := b.exec(ctx, b.s.db, `INSERT INTO sluice_batch_objects (id, rec, expires_us) VALUES (?, ?, @now + ?)
		ON CONFLICT (id) DO UPDATE SET rec = excluded.rec, expires_us = excluded.expires_us`, id, nonNil(rec), b.ttl)
	return batchUnavailable(err)
}

func (b *Batches) Get(ctx context.Context, id string) ([]byte, error) {
	return b.bytes(ctx, "SELECT rec FROM sluice_batch_objects WHERE id = ? AND expires_us > @now", id)
}

// Swap is one UPDATE whose WHERE holds the old record: of two replicas swapping the same
// record, the second finds it changed.
func (b *Batches) Swap(ctx context.Context, id string, old, rec []byte) (bool, error) {
	n, err := b.exec(ctx, b.s.db, `UPDATE sluice_batch_objects SET rec = ?, expires_us = @now + ?
		WHERE id = ? AND rec = ? AND expires_us > @now`, nonNil(rec), b.ttl, id, nonNil(old))
	return n == 1, batchUnavailable(err)
}

func (b *Batches) Drop(ctx context.Context, id string) (bool, error) {
	n, err := b.exec(ctx, b.s.db, "DELETE FROM sluice_batch_objects WHERE id = ? AND expires_us > @now", id)
	return n > 0, batchUnavailable(err)
}

// Add keeps val under id for ttl unless id is kept already (false: the first stays), and
// Delete forgets id: with Get, the store of the files and batches wires' records of their
// objects' owners (dialect.Store), in the records' table under ids of their own.
func (b *Batches) Add(ctx context.Context, id string, val []byte, ttl time.Duration) (bool, error) {
	n, err := b.exec(ctx, b.s.db, `INSERT INTO sluice_batch_objects (id, rec, expires_us) VALUES (?, ?, @now + ?)
		ON CONFLICT (id) DO UPDATE SET rec = excluded.rec, expires_us = excluded.expires_us
		WHERE sluice_batch_objects.expires_us <= @now`, id, nonNil(val), ttl.Microseconds())
	return n == 1, batchUnavailable(err)
}

func (b *Batches) Delete(ctx context.Context, id string) (bool, error) { return b.Drop(ctx, id) }

func (b *Batches) Index(ctx context.Context, list, id string, at int64) error {
	_, err := b.exec(ctx, b.s.db, `INSERT INTO sluice_batch_index (list, id, at, expires_us) VALUES (?, ?, ?, @now + ?)
		ON CONFLICT (list, id) DO UPDATE SET at = excluded.at, expires_us = excluded.expires_us`, list, id, at, b.ttl)
	return batchUnavailable(err)
}

func (b *Batches) Unindex(ctx context.Context, list, id string) error {
	_, err := b.exec(ctx, b.s.db, "DELETE FROM sluice_batch_index WHERE list = ? AND id = ?", list, id)
	return batchUnavailable(err)
}

func (b *Batches) Indexed(ctx context.Context, list string) ([]string, error) {
	rows, err := b.s.db.QueryContext(ctx, b.s.batchSQL(
		"SELECT id FROM sluice_batch_index WHERE list = ? AND expires_us > @now ORDER BY at DESC, id DESC"), list)
	if err != nil {
		return nil, batchUnavailable(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, batchUnavailable(err)
		}
		ids = append(ids, id)
	}
	return ids, batchUnavailable(rows.Err())
}

// progress makes batch's progress row if it has none, refreshes its expiry, and returns
// the next part never claimed. The upsert locks the row until tx ends: on PostgreSQL, the
// claims and finishes of one batch wait for each other, whichever replica makes them.
func (b *Batches) progress(ctx context.Context, tx *sql.Tx, batch string) (int, error) {
	var next int
	err := tx.QueryRowContext(ctx, b.s.batchSQL(`INSERT INTO sluice_batch_progress
		(batch, next, completed, failed, tokens_in, tokens_out, expires_us) VALUES (?, 0, 0, 0, 0, 0, @now + ?)
		ON CONFLICT (batch) DO UPDATE SET expires_us = excluded.expires_us RETURNING next`), batch, b.ttl).Scan(&next)
	return next, err
}

// finished is how many of batch's parts are done.
func (b *Batches) finished(ctx context.Context, q querier, batch string) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, b.s.batchSQL("SELECT count(*) FROM sluice_batch_parts WHERE batch = ? AND done = 1"), batch).Scan(&n)
	return n, err
}

// Claim is one transaction holding the batch's progress row: the part whose lease lapsed
// first (the lowest), else the next never claimed. Most claims (every runner's poll) find
// none: a read says so first, without the write lock that Renew and Answer wait for.
func (b *Batches) Claim(ctx context.Context, batch string, parts int, lease time.Duration) (part, finished int, err error) {
	var next, lapsed int
	err = b.s.db.QueryRowContext(ctx, b.s.batchSQL(`SELECT
		coalesce((SELECT next FROM sluice_batch_progress WHERE batch = ?), 0),
		(SELECT count(*) FROM sluice_batch_parts WHERE batch = ? AND done = 0 AND lease_us <= @now),
		(SELECT count(*) FROM sluice_batch_parts WHERE batch = ? AND done = 1)`), batch, batch, batch).Scan(&next, &lapsed, &finished)
	if err != nil || (next >= parts && lapsed == 0) {
		return -1, finished, batchUnavailable(err)
	}
	part = -1
	err = b.tx(ctx, func(tx *sql.Tx) error {
		next, err := b.progress(ctx, tx, batch)
		if err != nil {
			return err
		}
		err = tx.QueryRowContext(ctx, b.s.batchSQL(`SELECT part FROM sluice_batch_parts
			WHERE batch = ? AND done = 0 AND lease_us <= @now ORDER BY part LIMIT 1`), batch).Scan(&part)
		switch {
		case err == nil:
			_, err = b.exec(ctx, tx, "UPDATE sluice_batch_parts SET lease_us = @now + ? WHERE batch = ? AND part = ?",
				lease.Microseconds(), batch, part)
		case errors.Is(err, sql.ErrNoRows) && next < parts:
			part = next
			if _, err = b.exec(ctx, tx, "UPDATE sluice_batch_progress SET next = ? WHERE batch = ?", next+1, batch); err == nil {
				_, err = b.exec(ctx, tx, `INSERT INTO sluice_batch_parts (batch, part, lease_us, done, expires_us)
					VALUES (?, ?, @now + ?, 0, @now + ?)`, batch, part, lease.Microseconds(), b.ttl)
			}
		case errors.Is(err, sql.ErrNoRows):
			part, err = -1, nil
		}
		if err != nil {
			return err
		}
		finished, err = b.finished(ctx, tx, batch)
		return err
	})
	if err != nil {
		return -1, 0, err
	}
	return part, finished, nil
}

func (b *Batches) Renew(ctx context.Context, batch string, part int, lease time.Duration) error {
	_, err := b.exec(ctx, b.s.db, "UPDATE sluice_batch_parts SET lease_us = @now + ? WHERE batch = ? AND part = ? AND done = 0",
		lease.Microseconds(), batch, part)
	return batchUnavailable(err)
}

// Finish holds the batch's progress row as Claim does: of two replicas finishing the last
// two parts at once, the second counts the first's.
func (b *Batches) Finish(ctx context.Context, batch string, part int) (finished int, err error) {
	err = b.tx(ctx, func(tx *sql.Tx) error {
		if _, err := b.progress(ctx, tx, batch); err != nil {
			return err
		}
		if _, err := b.exec(ctx, tx, `INSERT INTO sluice_batch_parts (batch, part, lease_us, done, expires_us)
			VALUES (?, ?, NULL, 1, @now + ?) ON CONFLICT (batch, part) DO UPDATE SET lease_us = NULL, done = 1,
			expires_us = excluded.expires_us`, batch, part, b.ttl); err != nil {
			return err
		}
		finished, err = b.finished(ctx, tx, batch)
		return err
	})
	return finished, err
}

func (b *Batches) Leased(ctx context.Context, batch string) (int, error) {
	var n int
	err := b.s.db.QueryRowContext(ctx, b.s.batchSQL(
		"SELECT count(*) FROM sluice_batch_parts WHERE batch = ? AND done = 0 AND lease_us > @now"), batch).Scan(&n)
	return n, batchUnavailable(err)
}

// Answer inserts the line's result unless it has one, and adds t to the tally only when
// it did, in one transaction: an answer is counted once, whichever replica gave it.
func (b *Batches) Answer(ctx context.Context, batch string, line int, result []byte, t BatchTally) (kept bool, err error) {
	err = b.tx(ctx, func(tx *sql.Tx) error {
		n, err := b.exec(ctx, tx, `INSERT INTO sluice_batch_answers (batch, line, result, expires_us)
			VALUES (?, ?, ?, @now + ?) ON CONFLICT (batch, line) DO NOTHING`, batch, line, nonNil(result), b.ttl)
		if err != nil || n == 0 {
			return err
		}
		kept = true
		_, err = b.exec(ctx, tx, `INSERT INTO sluice_batch_progress
			(batch, next, completed, failed, tokens_in, tokens_out, expires_us) VALUES (?, 0, ?, ?, ?, ?, @now + ?)
			ON CONFLICT (batch) DO UPDATE SET completed = sluice_batch_progress.completed + excluded.completed,
			failed = sluice_batch_progress.failed + excluded.failed,
			tokens_in = sluice_batch_progress.tokens_in + excluded.tokens_in,
			tokens_out = sluice_batch_progress.tokens_out + excluded.tokens_out, expires_us = excluded.expires_us`,
			batch, t.Completed, t.Failed, t.InputTokens, t.OutputTokens, b.ttl)
		return err
	})
	return kept && err == nil, err
}

func (b *Batches) Answers(ctx context.Context, batch string, from, to int) ([][]byte, error) {
	out := make([][]byte, max(to-from, 0))
	if to <= from {
		return out, nil
	}
	rows, err := b.s.db.QueryContext(ctx, b.s.batchSQL(`SELECT line, result FROM sluice_batch_answers
		WHERE batch = ? AND line >= ? AND line < ? AND expires_us > @now`), batch, from, to)
	if err != nil {
		return nil, batchUnavailable(err)
	}
	defer rows.Close()
	for rows.Next() {
		var line int
		var res []byte
		if err := rows.Scan(&line, &res); err != nil {
			return nil, batchUnavailable(err)
		}
		out[line-from] = nonNil(res)
	}
	return out, batchUnavailable(rows.Err())
}

func (b *Batches) Tally(ctx context.Context, batch string) (BatchTally, error) {
	var t BatchTally
	err := b.s.db.QueryRowContext(ctx, b.s.batchSQL(`SELECT completed, failed, tokens_in, tokens_out
		FROM sluice_batch_progress WHERE batch = ?`), batch).Scan(&t.Completed, &t.Failed, &t.InputTokens, &t.OutputTokens)
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	return t, batchUnavailable(err)
}

// sweepBatches deletes the batches' rows past their expiry, up to 5000 rows a statement so
// that writes wait at most one statement; rowid is SQLite's row address, ctid PostgreSQL's.
func (s *sqlStore) sweepBatches(ctx context.Context) error {
	row := "rowid"
	if s.d.dollar {
		row = "ctid"
	}
	for _, t := range batchTables {
		for {
			res, err := s.db.ExecContext(ctx, s.batchSQL(fmt.Sprintf(
				"DELETE FROM %[1]s WHERE %[2]s IN (SELECT %[2]s FROM %[1]s WHERE expires_us <= @now LIMIT 5000)", t, row)))
			if err != nil {
				return fmt.Errorf("logstore: batches' retention: %w", err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				break
			}
		}
	}
	return nil
}

// nonNil is b, or an empty slice for nil: the columns are NOT NULL, and a kept empty value
// reads back as one, not as none.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
