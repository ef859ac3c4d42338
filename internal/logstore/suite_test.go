package logstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/logstore/pgtest"
)

// The shared suite: every test here runs against SQLite and a real PostgreSQL (one cluster,
// a database per test).
var suite = []struct {
	name string
	run  func(t *testing.T, open openFunc)
}{
	{"RoundTrip", testRoundTrip},
	{"DirtyText", testDirtyText},
	{"Filters", testFilters},
	{"Pagination", testPagination},
	{"ExactlyOnce", testExactlyOnce},
	{"Retention", testRetention},
	{"Ping", testPing},
	{"Usage", testUsage},
	{"Export", testExport},
	{"Tail", testTail},
	{"Audit", testAudit}, // audit_test.go
	{"RequestIDs", testRequestIDs},
	{"ContentRetention", testContentRetention}, // rollup_test.go
	{"Batches", testBatches},                   // batches_test.go
}

func TestSuite(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			open := openSQLiteTemp
			if kind == "postgres" {
				srv := pgtest.Start(t)
				open = func(t testing.TB, retention time.Duration) Store { return mustOpen(t, srv.NewDB(t), retention) }
			}
			for _, c := range suite {
				t.Run(c.name, func(t *testing.T) { c.run(t, open) })
			}
		})
	}
}

// full is a record with every field set.
func full(at time.Time) Record {
	return Record{
		ID: "req_full", RequestID: "client/req 1%", Time: at, Replica: "replica-1", KeyID: "key_1", KeyName: "team key",
		KeyMeta: map[string]string{"team": "red", "env": "prod"}, Team: "search", Wire: "responses", Method: "POST",
		Path: "/v1/responses", Alias: "smart", Target: "anthropic/claude",
		Attempts: []Attempt{{Target: "openai/gpt-4o", Kind: "timeout", MS: 1500.5, Status: 0},
			{Target: "anthropic/claude", Kind: "", MS: 800.25, Status: 200}},
		Status: 200, Stream: true, FirstEventMS: 310.5, FirstTokenMS: 420.75, DurationMS: 2400, OverheadMS: 1.5,
		TokensIn: 1200, TokensOut: 340, TokensCached: 1000, TokensReasoning: 50, TokensEstimated: true,
		CostUSD: 0.0123, Cache: "miss", Redactions: 2,
		CacheReadTokens: 1000, CacheWriteTokens: 150, CacheWrite1hTokens: 100, SavedUSD: 0.002325, CacheDropped: 1, Affinity: "kept",
		Guardrails: []Guardrail{{Name: "pii", Stage: "input", Verdict: "masked"}},
		Tools:      []ToolCall{{Name: "search", Server: "web", MS: 80, Outcome: "ok"}},
		UserAgent:  "curl/8.0", TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", Capture: "content",
		Content: &Content{Request: `[{"role":"user","content":"<img src=x onerror=alert(1)> héllo"}]`, Answer: "hi ***", Cap: 32768, Truncated: true},
	}
}

func testRoundTrip(t *testing.T, open openFunc) {
	st := open(t, 0)
	ctx := context.Background()
	at := time.Date(2026, 3, 4, 5, 6, 7, 891234567, time.FixedZone("X", 3600))
	want := full(time.Now().Add(-time.Hour))
	want.Time = at
	if err := st.Write(ctx, []Record{want}); err != nil {
		t.Fatalf("Write: %v", err)
	}
	got, err := st.Get(ctx, "req_full")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	want.Time = at.UTC().Truncate(time.Microsecond) // UTC, at the microseconds kept
	if !reflect.DeepEqual(*got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("got\n%s\nwant\n%s", g, w)
	}
	// Each record of a varied set reads back as prepare made it: the row's columns and its
	// document together are the record (appendRowDoc, scanRecord).
	set := recs(60, time.Now().Add(-2*time.Hour))
	if err := st.Write(ctx, set); err != nil {
		t.Fatalf("Write: %v", err)
	}
	for _, r := range set {
		want, err := prepare(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Get(ctx, r.ID)
		if err != nil {
			t.Fatalf("Get %s: %v", r.ID, err)
		}
		if !reflect.DeepEqual(*got, want) {
			t.Fatalf("%s: got\n%+v\nwant\n%+v", r.ID, *got, want)
		}
	}
	if _, err := st.Get(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("got %v for an unknown id, want ErrNotFound", err)
	}
	if _, err := st.Get(ctx, "bad\x00id\xff"); !errors.Is(err, ErrNotFound) {
		t.Errorf("got %v for a malformed id, want ErrNotFound", err)
	}
	// A record without capture has no content, and JSON without the field.
	bare := rec(1, time.Now())
	if err := st.Write(ctx, []Record{bare}); err != nil {
		t.Fatal(err)
	}
	got, err = st.Get(ctx, bare.ID)
	if err != nil || got.Content != nil {
		t.Fatalf("got %+v, %v, want a record without content", got, err)
	}
	b, _ := json.Marshal(got)
	if strings.Contains(string(b), `"content"`) {
		t.Errorf("got %s, want no content field", b)
	}
}

// TestJSONNames holds the field names the console and the admin API read.
func TestJSONNames(t *testing.T) {
	b, _ := json.Marshal(full(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var got []string
	for k := range m {
		got = append(got, k)
	}
	sort.Strings(got)
	want := strings.Fields(`affinity alias attempts cache cache_dropped cache_read_tokens cache_write_1h_tokens
		cache_write_tokens capture content cost_usd duration_ms error first_event_ms first_token_ms guardrails id key_id key_meta key_name kind method overhead_ms path redactions
		replica request_id saved_usd status stream target team time tokens_cached tokens_estimated tokens_in tokens_out
		tokens_reasoning tools trace_id user_agent wire`)
	if !slices.Equal(got, want) {
		t.Errorf("got fields %v, want %v", got, want)
	}
	if !strings.Contains(string(b), `"time":"2026-01-02T03:04:05Z"`) ||
		!strings.Contains(string(b), `"attempts":[{"target":"openai/gpt-4o","kind":"timeout","ms":1500.5,"status":0}`) ||
		!strings.Contains(string(b), `"content":{"request":`) || !strings.Contains(string(b), `"cap":32768,"truncated":true}`) {
		t.Errorf("got %s, want RFC 3339 time and the nested names", b)
	}
}

// TestDirtyText: text PostgreSQL refuses (NUL, invalid UTF-8) is stored with U+FFFD, never
// failing the batch; LIKE's wildcards in q are plain text.
func testDirtyText(t *testing.T, open openFunc) {
	st := open(t, 0)
	ctx := context.Background()
	r := rec(6, time.Now())
	r.UserAgent = "bad\x00agent\xff"
	r.KeyMeta = map[string]string{"te\x00am": "r\xffed"}
	r.Content = &Content{Request: "100% off_sale \x00", Answer: "ok", Cap: 10}
	r.CostUSD = nanValue()
	other := rec(12, time.Now())
	other.Content = &Content{Request: "100 percent offXsale", Answer: "ok", Cap: 10}
	if err := st.Write(ctx, []Record{r, other}); err != nil {
		t.Fatalf("Write: %v", err)
	}
	got, err := st.Get(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.UserAgent != "bad\uFFFDagent\uFFFD" || got.KeyMeta["te\uFFFDam"] != "r\uFFFDed" || got.CostUSD != 0 {
		t.Errorf("got %q %v %v, want U+FFFD for NUL and bad bytes, cost 0 for NaN", got.UserAgent, got.KeyMeta, got.CostUSD)
	}
	f := wide()
	f.Q = "% off_"
	if got := ids(all(t, st, f)); !slices.Equal(got, []string{r.ID}) {
		t.Errorf("got %v for q=%q, want only %s (wildcards are text)", got, f.Q, r.ID)
	}
}

func nanValue() float64 { zero := 0.0; return zero / zero }

func testFilters(t *testing.T, open openFunc) {
	st := open(t, 0)
	end := time.Now().UTC().Truncate(time.Second)
	set := recs(120, end)
	if err := st.Write(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	base := Filter{From: end.Add(-time.Hour), To: end, Limit: 1000}
	tests := []struct {
		name string
		f    func(f *Filter)
		keep func(r Record) bool
	}{
		{"all", func(f *Filter) {}, func(r Record) bool { return true }},
		{"key", func(f *Filter) { f.Key = "key_b" }, func(r Record) bool { return r.KeyID == "key_b" }},
		{"team", func(f *Filter) { f.Team = "search" }, func(r Record) bool { return r.Team == "search" }},
		{"alias", func(f *Filter) { f.Alias = "smart" }, func(r Record) bool { return r.Alias == "smart" }},
		{"target", func(f *Filter) { f.Target = "anthropic/claude" }, func(r Record) bool { return r.Target == "anthropic/claude" }},
		{"status", func(f *Filter) { f.Status = 502 }, func(r Record) bool { return r.Status == 502 }},
		{"kind", func(f *Filter) { f.Kind = "canceled" }, func(r Record) bool { return r.Kind == "canceled" }},
		{"stream true", func(f *Filter) { f.Stream = &yes }, func(r Record) bool { return r.Stream }},
		{"stream false", func(f *Filter) { f.Stream = &no }, func(r Record) bool { return !r.Stream }},
		{"cache", func(f *Filter) { f.Cache = "hit" }, func(r Record) bool { return r.Cache == "hit" }},
		{"affinity", func(f *Filter) { f.Affinity = "moved" }, func(r Record) bool { return r.Affinity == "moved" }},
		// The X-Request-Id the client got (issue 47): its own, shared by several records;
		// the record's id when it sent none; never the id of a record the client named.
		{"request_id shared", func(f *Filter) { f.RequestID = "retry/1% x" }, func(r Record) bool { return r.RequestID == "retry/1% x" }},
		{"request_id of a record the client did not name", func(f *Filter) { f.RequestID = "req_00003" },
			func(r Record) bool { return r.ID == "req_00003" }},
		{"request_id is not a named record's id", func(f *Filter) { f.RequestID = "req_00007" }, func(r Record) bool { return false }},
		{"request_id and scope", func(f *Filter) { f.RequestID, f.Scope = "retry/1% x", &Scope{Keys: []string{"key_a"}} },
			func(r Record) bool { return r.RequestID == "retry/1% x" && r.KeyID == "key_a" }},
		{"affinity and alias", func(f *Filter) { f.Affinity, f.Alias = "kept", "fast" },
			func(r Record) bool { return r.Affinity == "kept" && r.Alias == "fast" }},
		{"q case-insensitive", func(f *Filter) { f.Q = "zebras" }, func(r Record) bool { return r.Content != nil }},
		{"q one", func(f *Filter) { f.Q = "question 12 " }, func(r Record) bool { return r.ID == "req_00012" }},
		{"q answer", func(f *Filter) { f.Q = "answer 18" }, func(r Record) bool { return r.ID == "req_00018" }},
		{"from inclusive, to exclusive", func(f *Filter) { f.From, f.To = set[10].Time, set[20].Time },
			func(r Record) bool { return !r.Time.Before(set[10].Time) && r.Time.Before(set[20].Time) }},
		{"combined", func(f *Filter) { f.Key, f.Alias, f.Stream = "key_a", "fast", &yes },
			func(r Record) bool { return r.KeyID == "key_a" && r.Alias == "fast" && r.Stream }},
		{"none", func(f *Filter) { f.Key = "key_zzz" }, func(r Record) bool { return false }},
		// A caller's scope (issue 37): their teams' records or their own keys', ANDed with
		// the rest; an empty one, or one of the empty team name, selects nothing.
		{"scope team", func(f *Filter) { f.Scope = &Scope{Teams: []string{"search"}} }, func(r Record) bool { return r.Team == "search" }},
		{"scope teams or keys", func(f *Filter) { f.Scope = &Scope{Teams: []string{"infra"}, Keys: []string{"key_b"}} },
			func(r Record) bool { return r.Team == "infra" || r.KeyID == "key_b" }},
		{"scope and key", func(f *Filter) { f.Scope, f.Key = &Scope{Teams: []string{"search"}}, "key_b" },
			func(r Record) bool { return r.Team == "search" && r.KeyID == "key_b" }},
		{"scope and another team", func(f *Filter) { f.Scope, f.Team = &Scope{Teams: []string{"search"}}, "infra" },
			func(r Record) bool { return false }},
		{"scope empty", func(f *Filter) { f.Scope = &Scope{} }, func(r Record) bool { return false }},
		{"scope of no team", func(f *Filter) { f.Scope = &Scope{Teams: []string{""}} }, func(r Record) bool { return false }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := base
			tc.f(&f)
			var want []string
			for i := len(set) - 1; i >= 0; i-- {
				if r := set[i]; tc.keep(r) && !r.Time.Before(f.From) && r.Time.Before(f.To) {
					want = append(want, r.ID)
				}
			}
			if got := ids(all(t, st, f)); !slices.Equal(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
			if f.Scope != nil { // pages of a scope are full: the scope is in the query
				f.Limit = 7
				p, err := st.Query(context.Background(), f)
				if err != nil || len(p.Records) != min(7, len(want)) {
					t.Errorf("a first page of 7: got %d records (%v), want %d", len(p.Records), err, min(7, len(want)))
				}
				for i := range p.Records {
					if !f.Scope.Holds(&p.Records[i]) {
						t.Errorf("the scope does not hold %s, which its query returned", p.Records[i].ID)
					}
				}
			}
		})
	}
}

// TestPagination walks pages of several sizes over records that share times, so the id
// breaks ties, and a write between pages does not move the pages after it.
func testPagination(t *testing.T, open openFunc) {
	st := open(t, 0)
	ctx := context.Background()
	end := time.Now().UTC().Truncate(time.Second)
	var set []Record
	for i := range 250 {
		set = append(set, rec(i, end.Add(-time.Duration(i/4)*time.Second))) // 4 records a second
	}
	if err := st.Write(ctx, set); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{1, 7, 100, 249, 250, 1000} {
		f := wide()
		f.Limit = limit
		if got := all(t, st, f); len(got) != len(set) {
			t.Errorf("limit %d: got %d records, want %d", limit, len(got), len(set))
		}
	}
	f := wide()
	f.Limit = 10
	p1, err := st.Query(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Write(ctx, []Record{rec(999, end.Add(time.Second))}); err != nil { // newer than page 1
		t.Fatal(err)
	}
	f.Cursor = p1.NextCursor
	p2, err := st.Query(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	want := ids(all(t, st, wide()))[11:21] // after the new record and page 1
	if got := ids(p2.Records); !slices.Equal(got, want) {
		t.Errorf("page 2 got %v, want %v", got, want)
	}
	f.Cursor = "AAAA"
	if _, err := st.Query(ctx, f); err == nil {
		t.Error("got no error for a bad cursor")
	}
}

// TestExactlyOnce: two writers (two replicas) of 500 records each give 1000 records; the same
// batch written again, and the same records from both writers at once, stay once.
func testExactlyOnce(t *testing.T, open openFunc) {
	st := open(t, 0)
	ctx := context.Background()
	now := time.Now()
	var wg sync.WaitGroup
	shared := recs(100, now)
	for w := range 2 {
		wg.Go(func() {
			wr := NewWriter(st, WriterOptions{Batch: 64, Every: 10 * time.Millisecond})
			for i := range 500 {
				r := rec(i, now.Add(-time.Duration(i)*time.Millisecond))
				r.ID = fmt.Sprintf("w%d_%03d", w, i)
				r.Replica = fmt.Sprint("replica-", w)
				wr.Add(r)
			}
			for _, r := range shared { // both replicas send the same 100 records
				wr.Add(r)
			}
			if err := wr.Close(ctx); err != nil {
				t.Errorf("writer %d: Close: %v", w, err)
			}
			if n := wr.Dropped(); n != 0 {
				t.Errorf("writer %d dropped %d records", w, n)
			}
		})
	}
	wg.Wait()
	if n := count(t, st); n != 1100 {
		t.Fatalf("got %d records, want 1100 (500 + 500 + 100 shared)", n)
	}
	batch := recs(50, now.Add(-time.Hour))
	for i := range batch {
		batch[i].ID = fmt.Sprint("again_", i)
	}
	for range 2 {
		if err := st.Write(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	got := all(t, st, wide())
	seen := map[string]int{}
	for _, r := range got {
		seen[r.ID]++
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("record %s stored %d times", id, n)
		}
	}
	if len(got) != 1150 {
		t.Errorf("got %d records after a batch written twice, want 1150", len(got))
	}
}

func testRetention(t *testing.T, open openFunc) {
	st := open(t, 3*24*time.Hour)
	ctx := context.Background()
	now := time.Date(2026, 5, 20, 12, 0, 0, 0, time.UTC)
	var set []Record
	for d := 0; d <= 6; d++ { // 12:00 and 23:59 of each day from now back 6 days
		at := now.AddDate(0, 0, -d)
		set = append(set, rec(2*d, at), rec(2*d+1, day(at).Add(24*time.Hour-time.Minute)))
	}
	if err := st.Write(ctx, set); err != nil {
		t.Fatal(err)
	}
	if err := st.Retain(ctx, now); err != nil {
		t.Fatalf("Retain: %v", err)
	}
	// Kept: every record of the day now-3d (its day had not ended at the cutoff) and after.
	cutoff := day(now.AddDate(0, 0, -3))
	var want []string
	for i := len(set) - 1; i >= 0; i-- {
		if !set[i].Time.Before(cutoff) {
			want = append(want, set[i].ID)
		}
	}
	got := ids(all(t, st, wide()))
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("after retention got %v, want %v", got, want)
	}
	if err := st.Retain(ctx, now); err != nil { // again: nothing to do
		t.Fatalf("Retain again: %v", err)
	}
	// The records of a day that is gone can be written again (the days ahead are ready).
	if err := st.Write(ctx, []Record{rec(100, now.AddDate(0, 0, 2))}); err != nil {
		t.Fatalf("Write after retention: %v", err)
	}
}

func testPing(t *testing.T, open openFunc) {
	st := open(t, 0)
	if err := st.Ping(context.Background()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

// testRequestIDs (issue 47): records are keyed by the gateway's own id, so two requests that
// share an X-Request-Id (another team's client that chose the same one, a client's retry)
// are two records, each found by ?request_id= within its reader's scope; a record whose
// client sent none reads back its own id as its request id, and the column of the client's
// ids (and its partial index) holds nothing for it.
func testRequestIDs(t *testing.T, open openFunc) {
	st := open(t, 0)
	ctx := context.Background()
	at := time.Now().Add(-time.Minute)
	mk := func(id, reqID, team, key string, d time.Duration) Record {
		r := rec(1, at.Add(d))
		r.ID, r.RequestID, r.Team, r.KeyID = id, reqID, team, key
		return r
	}
	set := []Record{
		mk("0001a", "shared/id %1", "team-a", "key_a", 0),
		mk("0002b", "shared/id %1", "team-b", "key_b", time.Second),   // team B reuses A's id
		mk("0003a", "shared/id %1", "team-a", "key_a", 2*time.Second), // A retries with it
		mk("0004a", "", "team-a", "key_a", 3*time.Second),             // A sends none
		mk("0005b", "0004a", "team-b", "key_b", 4*time.Second),        // B names A's record's id
	}
	if err := st.Write(ctx, set); err != nil {
		t.Fatal(err)
	}
	if n := count(t, st); n != len(set) {
		t.Fatalf("got %d records, want %d: none lost to a shared request id", n, len(set))
	}
	for _, tc := range []struct {
		name, reqID string
		scope       *Scope
		want        []string
	}{
		{"admin", "shared/id %1", nil, []string{"0003a", "0002b", "0001a"}},
		{"team a", "shared/id %1", &Scope{Teams: []string{"team-a"}}, []string{"0003a", "0001a"}},
		{"team b", "shared/id %1", &Scope{Teams: []string{"team-b"}}, []string{"0002b"}},
		{"the record's own id", "0004a", nil, []string{"0005b", "0004a"}},
		{"the record's own id, team a", "0004a", &Scope{Teams: []string{"team-a"}}, []string{"0004a"}},
		{"a named record's id is not its request id", "0001a", nil, nil},
		{"bad text", "bad\x00id", nil, nil},
	} {
		f := wide()
		f.RequestID, f.Scope = tc.reqID, tc.scope
		if got := ids(all(t, st, f)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: request_id=%q: got %v, want %v", tc.name, tc.reqID, got, tc.want)
		}
	}
	got, err := st.Get(ctx, "0004a")
	if err != nil || got.RequestID != "0004a" {
		t.Errorf("a record whose client sent no id: got %+v (%v), want request_id = its id", got, err)
	}
	if _, err := st.Get(ctx, "shared/id %1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of a request id: got %v, want ErrNotFound (Get reads record ids)", err)
	}
	var named int
	if err := dbOf(st).QueryRowContext(ctx, "SELECT count(*) FROM sluice_logs WHERE request_id <> ''").Scan(&named); err != nil || named != 4 {
		t.Errorf("got %d rows with a client's id (%v), want 4: the record that got its own id keeps none", named, err)
	}
}

// dbOf is the database of a store of either kind.
func dbOf(st Store) *sql.DB {
	switch s := st.(type) {
	case *sqliteStore:
		return s.db
	case *pgStore:
		return s.db
	}
	panic("not a SQL store")
}
