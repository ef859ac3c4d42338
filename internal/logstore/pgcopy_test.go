package logstore

import (
	"encoding/binary"
	"math"
	"testing"
	"time"
)

// TestAppendCopy reads appendCopy's bytes back by COPY's binary format: the signature, 26
// fields a row in pgCopy's order, NULL content for a record without it, the time in
// microseconds since 2000, the end; and copySize is its length to the byte. The stores'
// round trip (TestSuite on PostgreSQL) checks that the server reads the same.
func TestAppendCopy(t *testing.T) {
	at := time.Date(2026, 12, 7, 19, 40, 1, 123456000, time.UTC)
	rs := recs(13, at) // rec: content on some records, errors on others
	rows, err := rowsOf(rs)
	if err != nil {
		t.Fatal(err)
	}
	b := appendCopy(nil, rows)
	if n := copySize(rows); n != len(b) {
		t.Errorf("copySize %d, appendCopy wrote %d bytes", n, len(b))
	}
	if string(b[:len(copySignature)]) != copySignature {
		t.Fatalf("got the header %q", b[:len(copySignature)])
	}
	p := b[len(copySignature):]
	take := func(n int) []byte {
		if len(p) < n {
			t.Fatalf("the data ends %d bytes short", n-len(p))
		}
		out := p[:n]
		p = p[n:]
		return out
	}
	for i, w := range rows {
		if n := binary.BigEndian.Uint16(take(2)); n != copyFields {
			t.Fatalf("row %d: %d fields, want %d", i, n, copyFields)
		}
		var fields [][]byte // nil: NULL
		for range copyFields {
			n := int32(binary.BigEndian.Uint32(take(4)))
			if n == -1 {
				fields = append(fields, nil)
				continue
			}
			fields = append(fields, take(int(n)))
		}
		text := func(j int) string { return string(fields[j]) }
		i64 := func(j int) int64 { return int64(binary.BigEndian.Uint64(fields[j])) }
		f64 := func(j int) float64 { return math.Float64frombits(binary.BigEndian.Uint64(fields[j])) }
		if text(0) != w.id || text(2) != w.keyID || text(3) != w.keyName || text(5) != w.alias || text(6) != w.target ||
			text(8) != w.kind || text(10) != w.cache || text(15) != w.doc || text(20) != w.team || text(24) != w.affinity ||
			text(25) != w.requestID {
			t.Errorf("row %d: a text column out of place", i)
		}
		if got := time.UnixMicro(i64(1) + pgEpochMicros).UTC(); !got.Equal(w.time) {
			t.Errorf("row %d: time %v, want %v", i, got, w.time)
		}
		if m := fields[4]; m[0] != 1 || string(m[1:]) != w.keyMeta {
			t.Errorf("row %d: key_meta %q, want jsonb version 1 and %q", i, m, w.keyMeta)
		}
		if st := int32(binary.BigEndian.Uint32(fields[7])); int(st) != w.status {
			t.Errorf("row %d: status %d, want %d", i, st, w.status)
		}
		if s := fields[9][0] == 1; s != w.stream {
			t.Errorf("row %d: stream %v, want %v", i, s, w.stream)
		}
		if i64(11) != int64(w.tokensIn) || i64(12) != int64(w.tokensOut) || i64(21) != int64(w.cacheRead) ||
			i64(22) != int64(w.cacheWrite) {
			t.Errorf("row %d: tokens %d %d %d %d, want %d %d %d %d", i, i64(11), i64(12), i64(21), i64(22),
				w.tokensIn, w.tokensOut, w.cacheRead, w.cacheWrite)
		}
		if f64(13) != w.costUSD || f64(14) != w.firstTokenMS || f64(23) != w.savedUSD {
			t.Errorf("row %d: cost %v, first token %v, saved %v", i, f64(13), f64(14), f64(23))
		}
		if w.capN == nil {
			for j := 16; j < 20; j++ {
				if fields[j] != nil {
					t.Errorf("row %d, no content: column %d is %q, want NULL", i, j, fields[j])
				}
			}
			continue
		}
		if text(16) != *w.req || text(17) != *w.ans || int(int32(binary.BigEndian.Uint32(fields[18]))) != *w.capN ||
			(fields[19][0] == 1) != *w.trunc {
			t.Errorf("row %d: content out of place", i)
		}
	}
	if end := binary.BigEndian.Uint16(take(2)); end != math.MaxUint16 || len(p) != 0 {
		t.Errorf("the data ends with %#x and %d bytes more, want 0xffff and none", end, len(p))
	}
	var content int
	for _, w := range rows {
		if w.capN != nil {
			content++
		}
	}
	if content == 0 || content == len(rows) {
		t.Errorf("%d of %d rows with content: the test needs both kinds", content, len(rows))
	}
}
