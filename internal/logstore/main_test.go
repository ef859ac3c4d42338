package logstore

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// openFunc opens a fresh, empty store for one test, closed at its end.
type openFunc func(t testing.TB, retention time.Duration) Store

// openSQLiteTemp opens a store in a file of the test's temporary folder.
func openSQLiteTemp(t testing.TB, retention time.Duration) Store {
	return mustOpen(t, "sqlite://"+filepath.Join(t.TempDir(), "logs.db"), retention)
}

func mustOpen(t testing.TB, url string, retention time.Duration) Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := Open(ctx, Options{URL: url, Retention: retention})
	if err != nil {
		t.Fatalf("Open(%s): %v", url, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// rec is record i of a test set at time at: fields vary with i so that each filter selects a
// known part of a set.
func rec(i int, at time.Time) Record {
	r := Record{
		ID:       fmt.Sprintf("req_%05d", i),
		Time:     at,
		Replica:  "r1",
		KeyID:    []string{"key_a", "key_b"}[i%2],
		KeyName:  []string{"alpha", "beta"}[i%2],
		KeyMeta:  map[string]string{"team": []string{"red", "blue", "green"}[i%3]},
		Wire:     "chat",
		Method:   "POST",
		Path:     "/v1/chat/completions",
		Alias:    []string{"fast", "smart", "cheap"}[i%3],
		Target:   []string{"openai/gpt-4o-mini", "anthropic/claude"}[i%2],
		Status:   200,
		Stream:   i%4 == 0,
		Cache:    []string{"", "hit", "miss", "bypass", "coalesced"}[i%5],
		TokensIn: 10 + i, TokensOut: 5 + i,
		CostUSD:      float64(i) / 1000,
		FirstTokenMS: float64(10 + i%50),
		DurationMS:   float64(100 + i),
		Capture:      "metadata",
	}
	switch {
	case i%7 == 0:
		r.Status, r.Kind, r.Error = 502, "unavailable", "the upstream failed"
		r.Attempts = []Attempt{{Target: "openai/gpt-4o-mini", Kind: "unavailable", MS: 12, Status: 502}}
	case i%11 == 0:
		r.Status, r.Kind = 499, "canceled"
	default:
		r.Attempts = []Attempt{{Target: r.Target, MS: 20, Status: 200}}
	}
	r.Team = []string{"search", "infra", ""}[i%3]
	// The X-Request-Id the client got (issue 47): the record's id, or on one in five its
	// own, which three share (a retry, two teams choosing the same id).
	r.RequestID = r.ID
	if i%5 == 2 {
		r.RequestID = fmt.Sprintf("retry/%d%% x", i%3)
	}
	// The provider's prompt cache (issue 46): a read on two turns in three, a write (its 1h
	// part on some) on one in four, the saving of either sign, each affinity outcome.
	if i%3 != 0 {
		r.CacheReadTokens = 8 + i
		r.TokensCached = r.CacheReadTokens
	}
	if i%4 == 1 {
		r.CacheWriteTokens, r.CacheWrite1hTokens = 2+i%3, i%2
	}
	r.SavedUSD = float64(r.CacheReadTokens*9-r.CacheWriteTokens*3) / 1e7
	r.CacheDropped = i % 2
	r.Affinity = []string{"", "new", "kept", "moved"}[i%4]
	if i%6 == 0 {
		r.Capture = "content"
		r.Content = &Content{Request: fmt.Sprintf("question %d about Zebras", i), Answer: "answer " + fmt.Sprint(i), Cap: 32768}
	}
	return r
}

// recs is n records, newest last, one second apart, ending one second before end.
func recs(n int, end time.Time) []Record {
	out := make([]Record, n)
	for i := range out {
		out[i] = rec(i, end.Add(-time.Duration(n-i)*time.Second))
	}
	return out
}

// all reads every record f selects, page by page, checking the order on the way.
func all(t testing.TB, st Store, f Filter) []Record {
	t.Helper()
	var out []Record
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatal("more than 10000 pages: the cursor does not move")
		}
		p, err := st.Query(context.Background(), f)
		if err != nil {
			t.Fatalf("Query(%+v): %v", f, err)
		}
		out = append(out, p.Records...)
		if p.NextCursor == "" {
			break
		}
		if len(p.Records) != f.limit() {
			t.Fatalf("got a page of %d records with a next cursor, want %d", len(p.Records), f.limit())
		}
		f.Cursor = p.NextCursor
	}
	for i := 1; i < len(out); i++ {
		a, b := out[i-1], out[i]
		if a.Time.Before(b.Time) || a.Time.Equal(b.Time) && a.ID <= b.ID {
			t.Fatalf("record %d (%s %s) comes before %d (%s %s): want newest first, then id descending", i-1, a.Time, a.ID, i, b.Time, b.ID)
		}
	}
	return out
}

func ids(rs []Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// wide is a filter over every time a test uses.
func wide() Filter {
	return Filter{From: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC), Limit: MaxLimit}
}

func count(t testing.TB, st Store) int {
	t.Helper()
	return len(all(t, st, wide()))
}
