package logstore

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSQLiteReopen: records survive Close and a new Open (a restart), on a relative path
// whose folder Open creates.
func TestSQLiteReopen(t *testing.T) {
	t.Chdir(t.TempDir())
	ctx := context.Background()
	url := "sqlite://./data/nested/logs.db"
	st, err := Open(ctx, Options{URL: url})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	set := recs(30, time.Now())
	if err := st.Write(ctx, set); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("data/nested/logs.db"); err != nil {
		t.Fatalf("the file is not where the URL says: %v", err)
	}
	st, err = Open(ctx, Options{URL: url})
	if err != nil {
		t.Fatalf("Open again: %v", err)
	}
	defer st.Close()
	if n := count(t, st); n != len(set) {
		t.Errorf("got %d records after a restart, want %d", n, len(set))
	}
	if r, err := st.Get(ctx, set[7].ID); err != nil || r.Alias != set[7].Alias {
		t.Errorf("Get after a restart: got %+v, %v", r, err)
	}
}

// immutable makes path unwritable, even for root (chattr +i), or skips the test where the
// file system cannot. Cleanup undoes it so that the folder can be removed.
func immutable(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		mode := os.FileMode(0o444)
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			mode = 0o555
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(path, 0o755) })
		return
	}
	out, err := exec.Command("chattr", "+i", path).CombinedOutput()
	if err != nil {
		// Root writes through file modes; only the immutable flag stops it.
		t.Skipf("running as root, and chattr +i fails here (%v: %s): cannot make a file read-only", err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", path).Run() })
}

// TestSQLiteCannotWrite: a read-only file, a read-only folder, a locked file, a file that is
// no database: a clear error from Open, never a panic and never a store that fails later.
func TestSQLiteCannotWrite(t *testing.T) {
	ctx := context.Background()
	t.Run("read-only file", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "logs.db")
		st := mustOpen(t, "sqlite://"+path, 0)
		st.Close()
		immutable(t, path)
		_, err := Open(ctx, Options{URL: "sqlite://" + path + "?busy_timeout=100"})
		if err == nil || !strings.Contains(err.Error(), "read-only") {
			t.Fatalf("got %v, want an error saying the file is read-only", err)
		}
	})
	t.Run("read-only folder", func(t *testing.T) {
		dir := t.TempDir()
		immutable(t, dir)
		_, err := Open(ctx, Options{URL: "sqlite://" + filepath.Join(dir, "logs.db")})
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "logs.db")) {
			t.Fatalf("got %v, want an error naming the file", err)
		}
	})
	t.Run("locked", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "logs.db")
		mustOpen(t, "sqlite://"+path, 0).Close()
		// Another process's write transaction holds the file.
		other, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		conn, err := other.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
			t.Fatal(err)
		}
		defer conn.ExecContext(ctx, "ROLLBACK")
		_, err = Open(ctx, Options{URL: "sqlite://" + path + "?busy_timeout=50"})
		if err == nil || !strings.Contains(err.Error(), "locked") {
			t.Fatalf("got %v, want an error saying the file is locked", err)
		}
	})
	t.Run("not a database", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "logs.db")
		if err := os.WriteFile(path, []byte(strings.Repeat("not sqlite at all\n", 100)), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Open(ctx, Options{URL: "sqlite://" + path})
		if err == nil || !strings.Contains(err.Error(), "not an SQLite database") {
			t.Fatalf("got %v, want an error saying it is no database", err)
		}
	})
	t.Run("a folder, not a file", func(t *testing.T) {
		_, err := Open(ctx, Options{URL: "sqlite://" + t.TempDir()})
		if err == nil {
			t.Fatal("got no error opening a folder")
		}
	})
}

func TestOpenBadURL(t *testing.T) {
	for _, url := range []string{"", "logs.db", "mysql://x", "sqlite://", "sqlite://:memory:",
		"sqlite://x.db?cache=shared", "sqlite://x.db?busy_timeout=soon", "postgres://%zz", "postgres://u:secret@/db?sslmode=bogus"} {
		t.Run(url, func(t *testing.T) {
			t.Chdir(t.TempDir())
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			st, err := Open(ctx, Options{URL: url})
			if err == nil {
				st.Close()
				t.Fatal("got no error")
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

// TestSQLitePlans: every filter of the console is served by an index (migration 4 left four
// B-trees), newest first without a sort, whatever else is set.
func TestSQLitePlans(t *testing.T) {
	st := openSQLiteTemp(t, 0).(*sqliteStore)
	yes := true
	cursor := encodeCursor(keyset{Time: time.Now(), ID: "req_00001"})
	for _, c := range []struct {
		name  string
		f     Filter
		index string
	}{
		{"time", Filter{}, "sluice_logs_time"},
		{"key", Filter{Key: "key_a"}, "sluice_logs_key"},
		{"key, next page", Filter{Key: "key_a", Cursor: cursor}, "sluice_logs_key"},
		{"team", Filter{Team: "search"}, "sluice_logs_time"},
		{"alias", Filter{Alias: "fast"}, "sluice_logs_time"},
		{"target", Filter{Target: "openai/gpt-4o-mini"}, "sluice_logs_time"},
		{"status 502", Filter{Status: 502}, "sluice_logs_status"},
		{"status 502 and alias", Filter{Status: 502, Alias: "fast"}, "sluice_logs_status"},
		{"status 200", Filter{Status: 200}, "sluice_logs_time"},
		{"kind", Filter{Kind: "unavailable"}, "sluice_logs_kind"},
		{"stream", Filter{Stream: &yes}, "sluice_logs_time"},
		{"cache", Filter{Cache: "hit"}, "sluice_logs_time"},
		{"affinity", Filter{Affinity: "moved"}, "sluice_logs_time"},
		{"next page", Filter{Cursor: cursor}, "sluice_logs_time"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := c.f
			f.From, f.To = time.Now().Add(-24*time.Hour), time.Now()
			p := queryPlan(t, st, f)
			if !strings.HasPrefix(p, "SEARCH sluice_logs USING INDEX "+c.index+" (") || strings.Contains(p, "TEMP B-TREE") {
				t.Errorf("got plan %q, want a search of the index %s and no sort", p, c.index)
			}
		})
	}
}

// TestCursorBound: a next page's range ends just past its cursor, whatever the filter's to
// says, so that the index range starts at the cursor (issue 50: with to alone, each page of
// an export walked every newer entry again); a to before the cursor stays.
func TestCursorBound(t *testing.T) {
	st := openSQLiteTemp(t, 0).(*sqliteStore)
	now := time.Now().UTC().Truncate(time.Microsecond)
	at := now.Add(-time.Hour)
	cursor := encodeCursor(keyset{Time: at, ID: "req_00001"})
	for _, c := range []struct {
		to, want time.Time
	}{{now, at.Add(time.Microsecond)}, {time.Time{}, at.Add(time.Microsecond)}, {at.Add(-time.Minute), at.Add(-time.Minute)}} {
		_, list, err := st.pageSQL(Filter{From: now.Add(-24 * time.Hour), To: c.to, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(list, any(c.want.UnixMicro())) || slices.Contains(list, any(now.UnixMicro())) {
			t.Errorf("to %v: the arguments %v hold no end at %d (want the sooner of to and just past the cursor)", c.to, list, c.want.UnixMicro())
		}
	}
}

// TestSQLiteSearchPlan: ?q= of 3 characters or more asks the trigram index of the content
// (issue 50) for its rows.
func TestSQLiteSearchPlan(t *testing.T) {
	st := openSQLiteTemp(t, 0).(*sqliteStore)
	p := queryPlan(t, st, Filter{Q: "refund policy", From: time.Now().Add(-24 * time.Hour), To: time.Now()})
	if !strings.Contains(p, "VIRTUAL TABLE INDEX") || !strings.Contains(p, "sluice_logs_fts") {
		t.Errorf("got plan %q, want the content's index sluice_logs_fts", p)
	}
}

// TestSQLiteRequestIDPlan: ?request_id= reads two indexes (issue 47), the partial one of the
// ids clients chose and the primary key (a record whose client got its id), never a scan of
// the log; the few records it finds are then sorted.
func TestSQLiteRequestIDPlan(t *testing.T) {
	st := openSQLiteTemp(t, 0).(*sqliteStore)
	p := queryPlan(t, st, Filter{RequestID: "retry/1", From: time.Now().Add(-24 * time.Hour), To: time.Now()})
	if !strings.Contains(p, "USING INDEX sluice_logs_request (request_id=?") || !strings.Contains(p, "USING INDEX sqlite_autoindex_sluice_logs_1 (id=?)") ||
		strings.Contains(p, "SCAN sluice_logs") {
		t.Errorf("got plan %q, want the request_id index and the primary key, no scan", p)
	}
}

// queryPlan is SQLite's plan of the page query of f, its steps joined by "; ".
func queryPlan(t *testing.T, st *sqliteStore, f Filter) string {
	t.Helper()
	q, list, err := st.pageSQL(f)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := st.db.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, list...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "; ")
}

// TestSQLiteMigrate: a file written by a gateway before migration 4 (three migrations, the
// old indexes, records in it), or before migration 5 (issue 46: no prompt-cache columns),
// opens, keeps its records and finds them through the new indexes; the old records read
// back with no prompt-cache numbers, a new one with its own, and Usage sums both; a second
// Open finds nothing to do.
func TestSQLiteMigrate(t *testing.T) {
	for _, from := range []int{3, 4, 5} {
		t.Run(fmt.Sprint("from version ", from), func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "logs.db")
			old, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			for i, m := range sqliteSchema[:from] {
				if _, err := old.ExecContext(ctx, m); err != nil {
					t.Fatalf("migration %d: %v", i+1, err)
				}
			}
			now := time.Now()
			set := oldRecords(recs(40, now.Add(-time.Minute)))
			rows, err := rowsOf(set)
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range rows {
				// As the gateway before issue 46 wrote them, one row at a time.
				if _, err := old.ExecContext(ctx, `INSERT INTO sluice_logs (id, time_us, key_id, key_name, key_meta,
					alias, target, status, kind, stream, cache, tokens_in, tokens_out, cost_usd, first_token_ms, doc,
					content_request, content_answer, content_cap, content_truncated, team)
					VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
					w.id, w.time.UnixMicro(), w.keyID, w.keyName, w.keyMeta, w.alias, w.target, w.status, w.kind,
					w.stream, w.cache, w.tokensIn, w.tokensOut, w.costUSD, w.firstTokenMS, oldDoc(t, set[i]), w.req, w.ans,
					w.capN, w.trunc, w.team); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := old.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", from)); err != nil {
				t.Fatal(err)
			}
			old.Close()
			for pass := range 2 {
				st := mustOpen(t, "sqlite://"+path, 0).(*sqliteStore)
				var v int
				if err := st.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil || v != len(sqliteSchema) {
					t.Fatalf("got schema version %d (%v), want %d", v, err, len(sqliteSchema))
				}
				f := wide()
				f.Status = 502
				want := 0
				for _, r := range set {
					if r.Status == 502 {
						want++
					}
				}
				if got := len(all(t, st, f)); got != want || want == 0 {
					t.Errorf("got %d records of status 502, want %d", got, want)
				}
				if n := count(t, st); n != len(set)+pass {
					t.Errorf("got %d records, want %d", n, len(set)+pass)
				}
				if pass == 0 {
					checkMigratedRequestID(t, st, set)
					checkMigratedCache(t, st, set, now)
				}
				st.Close()
			}
		})
	}
}

// oldRecords are set as a gateway before issue 46 wrote them: no prompt-cache fields, and
// the client's request id as the record's id.
func oldRecords(set []Record) []Record {
	for i := range set {
		r := &set[i]
		r.CacheReadTokens, r.CacheWriteTokens, r.CacheWrite1hTokens, r.SavedUSD, r.CacheDropped, r.Affinity = 0, 0, 0, 0, 0, ""
		r.RequestID = r.ID
	}
	return set
}

// oldDoc is r's document as a gateway before issue 47 wrote it: the whole record (not
// appendRowDoc's rest of it), without request_id.
func oldDoc(t *testing.T, r Record) string {
	t.Helper()
	p, err := prepare(r)
	if err != nil {
		t.Fatal(err)
	}
	p.Content = nil
	return strings.Replace(string(appendDoc(nil, &p)), `,"request_id":"`+p.ID+`"`, "", 1)
}

// checkMigratedRequestID: in a store migrated from before issue 47, an old record (its id
// the client's, no request_id in its document nor its row) reads back that id as its
// request id, and ?request_id= finds it.
func checkMigratedRequestID(t *testing.T, st Store, old []Record) {
	t.Helper()
	// Every old record, its document whole, reads back as it was written.
	for _, want := range old {
		got, err := st.Get(context.Background(), want.ID)
		if err != nil {
			t.Fatal(err)
		}
		want.Time = want.Time.UTC().Truncate(time.Microsecond)
		if !reflect.DeepEqual(*got, want) {
			t.Fatalf("old record %s: got\n%+v\nwant\n%+v", want.ID, *got, want)
		}
	}
	r := old[7]
	if got, err := st.Get(context.Background(), r.ID); err != nil || got.RequestID != r.ID {
		t.Errorf("old record: got %+v (%v), want request_id %q", got, err, r.ID)
	}
	f := wide()
	f.RequestID = r.ID
	if got := ids(all(t, st, f)); !slices.Equal(got, []string{r.ID}) {
		t.Errorf("request_id=%s: got %v, want the old record", r.ID, got)
	}
}

// checkMigratedCache: in a store migrated from before issue 46 that holds the records old,
// an old record reads back as it was written, a new one (written at now) with its prompt
// cache's fields; the rollups of both levels hold the old records; Usage sums the new
// columns (the old rows count 0) and the affinity filter finds the new record only.
func checkMigratedCache(t *testing.T, st Store, old []Record, now time.Time) {
	t.Helper()
	ctx := context.Background()
	s := st.(interface{ sqlOf() *sqlStore }).sqlOf()
	for _, l := range []level{hourly, daily} { // the migrations filled both levels of rollups
		var n int64
		if err := s.db.QueryRowContext(ctx, "SELECT CAST(coalesce(sum(requests), 0) AS BIGINT) FROM "+l.table).Scan(&n); err != nil || n != int64(len(old)) {
			t.Errorf("%s: got %d requests (%v), want the %d records", l.table, n, err, len(old))
		}
	}
	got, err := st.Get(ctx, old[5].ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := old[5]; got.CacheReadTokens != 0 || got.Affinity != "" || got.TokensCached != want.TokensCached || got.TokensIn != want.TokensIn {
		t.Errorf("old record: got %+v, want %+v", *got, want)
	}
	fresh := full(now)
	fresh.ID = "req_after_migration"
	if err := st.Write(ctx, []Record{fresh}); err != nil {
		t.Fatalf("Write after the migration: %v", err)
	}
	if got, err := st.Get(ctx, fresh.ID); err != nil || got.CacheReadTokens != fresh.CacheReadTokens ||
		got.CacheWrite1hTokens != fresh.CacheWrite1hTokens || got.SavedUSD != fresh.SavedUSD || got.Affinity != fresh.Affinity {
		t.Errorf("new record: got %+v (%v), want %+v", got, err, fresh)
	}
	rows, err := st.Usage(ctx, UsageQuery{From: now.Add(-time.Hour), To: now.Add(time.Hour)})
	if err != nil || len(rows) != 1 {
		t.Fatalf("Usage: got %+v, %v, want one row", rows, err)
	}
	if u := rows[0]; u.Requests != int64(len(old)+1) || u.CacheReadTokens != int64(fresh.CacheReadTokens) ||
		u.CacheWriteTokens != int64(fresh.CacheWriteTokens) || !near(u.SavedUSD, fresh.SavedUSD) {
		t.Errorf("Usage: got %+v, want %d requests and the new record's cache reads %d, writes %d, saving %v",
			u, len(old)+1, fresh.CacheReadTokens, fresh.CacheWriteTokens, fresh.SavedUSD)
	}
	f := wide()
	f.Affinity = fresh.Affinity
	if got := ids(all(t, st, f)); !slices.Equal(got, []string{fresh.ID}) {
		t.Errorf("affinity=%s: got %v, want [%s]", fresh.Affinity, got, fresh.ID)
	}
}
