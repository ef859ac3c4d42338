package logstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// A batch goes to PostgreSQL as COPY ... FROM STDIN in the binary format, written by
// appendCopy into one pooled buffer and sent in 64 KiB messages (pgconn's CopyFrom). The
// unnest insert (pgInsert) made pgx encode 26 arrays element by element into a buffer it
// drops after each statement, then copy them again into a write buffer it also drops: in the
// gateway's profile that growth was a third of the writer's CPU. COPY has no ON CONFLICT: a
// record already kept (a batch written again after a lost commit) fails it with a unique
// violation, and the batch goes again by the exact path (pgInsert ... RETURNING id), as a
// short count did before.
//
// The binary format (PostgreSQL's "COPY", "Binary Format"): a signature, flags and an
// extension length; each row its field count, then each field its length (-1: NULL) and
// its bytes in the type's binary send form; -1 as a field count ends it.

// pgCopy is the COPY of appendCopy's rows.
const pgCopy = `COPY sluice_logs (` + pgWritten + `) FROM STDIN (FORMAT binary)`

// copyFields is the number of pgWritten's columns.
const copyFields = 26

// copySignature is the binary format's header: the signature, no flags (no OIDs), an
// extension of 0 bytes.
const copySignature = "PGCOPY\n\xff\r\n\x00" + "\x00\x00\x00\x00" + "\x00\x00\x00\x00"

// pgEpochMicros is PostgreSQL's epoch (2000-01-01 UTC) in microseconds since Unix's: a
// timestamptz is sent as the microseconds since it.
const pgEpochMicros = 946684800 * 1000000

// copySize is appendCopy's length for rows, to size its buffer once.
func copySize(rows []row) int {
	n := len(copySignature) + 2
	for i := range rows {
		w := &rows[i]
		// The field count, 26 lengths, the time and 7 numbers of 8 bytes, the status, the
		// stream and key_meta's jsonb version byte; content adds its cap and truncated.
		n += 2 + copyFields*4 + 8*8 + 4 + 1 + 1
		n += len(w.id) + len(w.keyID) + len(w.keyName) + len(w.keyMeta) + len(w.alias) + len(w.target) +
			len(w.kind) + len(w.cache) + len(w.doc) + len(w.team) + len(w.affinity) + len(w.requestID)
		if w.capN != nil {
			n += 4 + 1 + len(*w.req) + len(*w.ans)
		}
	}
	return n
}

// appendCopy appends rows to b in COPY's binary format, in pgCopy's column order. A record
// without content has NULL in its four content columns, as pgInsert writes it.
func appendCopy(b []byte, rows []row) []byte {
	b = append(b, copySignature...)
	for i := range rows {
		w := &rows[i]
		b = binary.BigEndian.AppendUint16(b, copyFields)
		b = copyText(b, w.id)
		b = copyInt64(b, w.time.UnixMicro()-pgEpochMicros)
		b = copyText(b, w.keyID)
		b = copyText(b, w.keyName)
		b = binary.BigEndian.AppendUint32(b, uint32(1+len(w.keyMeta)))
		b = append(b, 1) // jsonb's version
		b = append(b, w.keyMeta...)
		b = copyText(b, w.alias)
		b = copyText(b, w.target)
		b = copyInt32(b, int32(w.status))
		b = copyText(b, w.kind)
		b = copyBool(b, w.stream)
		b = copyText(b, w.cache)
		b = copyInt64(b, int64(w.tokensIn))
		b = copyInt64(b, int64(w.tokensOut))
		b = copyInt64(b, int64(math.Float64bits(w.costUSD)))
		b = copyInt64(b, int64(math.Float64bits(w.firstTokenMS)))
		b = copyText(b, w.doc)
		if w.capN != nil {
			b = copyText(b, *w.req)
			b = copyText(b, *w.ans)
			b = copyInt32(b, int32(*w.capN))
			b = copyBool(b, *w.trunc)
		} else {
			for range 4 {
				b = binary.BigEndian.AppendUint32(b, math.MaxUint32) // -1: NULL
			}
		}
		b = copyText(b, w.team)
		b = copyInt64(b, int64(w.cacheRead))
		b = copyInt64(b, int64(w.cacheWrite))
		b = copyInt64(b, int64(math.Float64bits(w.savedUSD)))
		b = copyText(b, w.affinity)
		b = copyText(b, w.requestID)
	}
	return binary.BigEndian.AppendUint16(b, math.MaxUint16) // -1: the end
}

func copyText(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func copyInt64(b []byte, v int64) []byte {
	b = binary.BigEndian.AppendUint32(b, 8)
	return binary.BigEndian.AppendUint64(b, uint64(v))
}

func copyInt32(b []byte, v int32) []byte {
	b = binary.BigEndian.AppendUint32(b, 4)
	return binary.BigEndian.AppendUint32(b, uint32(v))
}

func copyBool(b []byte, v bool) []byte {
	b = binary.BigEndian.AppendUint32(b, 1)
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// pgCopyRows writes rows with pgCopy on conn, within the transaction begun on it, and
// adds their ids to inserted. It reports false, with no error, when a record was kept
// already: the transaction is then aborted, and the caller rolls back and writes the batch
// by the exact path.
func pgCopyRows(ctx context.Context, conn *sql.Conn, rows []row, inserted map[string]bool) (bool, error) {
	bp := docBufs.Get().(*[]byte)
	b := *bp
	if n := copySize(rows); cap(b) < n {
		b = make([]byte, 0, n)
	}
	b = appendCopy(b[:0], rows)
	var tag pgconn.CommandTag
	var panicked any
	err := conn.Raw(func(dc any) (err error) {
		// Raw closes the connection after a panic (or driver.ErrBadConn, which pgconn never
		// returns), and that waits for the transaction, which holds it: the writer would hang.
		// So a panic leaves Raw as an error, and is raised again once Raw has returned.
		defer func() {
			if p := recover(); p != nil {
				panicked, err = p, errors.New("COPY panicked")
			}
		}()
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("a connection of %T, not pgx's", dc)
		}
		tag, err = c.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(b), pgCopy)
		return err
	})
	if panicked != nil {
		panic(panicked)
	}
	// On a broken connection CopyFrom may return before its goroutine stopped reading b:
	// only a copy that ended well gives its buffer back.
	if err == nil {
		*bp = b
		putDocBuf(bp)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" { // unique_violation: (id, time) is kept
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if tag.RowsAffected() != int64(len(rows)) {
		return false, fmt.Errorf("COPY wrote %d rows of %d", tag.RowsAffected(), len(rows))
	}
	for i := range rows {
		inserted[rows[i].id] = true
	}
	return true, nil
}
