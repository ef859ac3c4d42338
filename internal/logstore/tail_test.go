package logstore

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

func testExport(t *testing.T, open openFunc) {
	st := open(t, 0)
	ctx := context.Background()
	set := recs(2100, time.Now()) // three pages of 1000
	set[2099].UserAgent = "=HYPERLINK(\"http://x\")"
	if err := st.Write(ctx, set); err != nil {
		t.Fatal(err)
	}
	f := wide()
	f.Alias = "fast"
	want := all(t, st, f)
	var jl bytes.Buffer
	if err := ExportJSONL(ctx, st, f, &jl); err != nil {
		t.Fatalf("ExportJSONL: %v", err)
	}
	var got []Record
	dec := json.NewDecoder(&jl)
	for dec.More() {
		var r Record
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("JSONL: got %d records, want the %d of the query, in order", len(got), len(want))
	}
	var cv bytes.Buffer
	if err := ExportCSV(ctx, st, wide(), &cv); err != nil {
		t.Fatalf("ExportCSV: %v", err)
	}
	lines, err := csv.NewReader(&cv).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != len(set)+1 || !slices.Equal(lines[0], CSVHeader) {
		t.Fatalf("CSV: got %d lines, header %v; want %d and %v", len(lines), lines[0], len(set)+1, CSVHeader)
	}
	newest := lines[1]
	if newest[0] != set[2099].ID || newest[26] != `'=HYPERLINK("http://x")` || newest[10] != "1" {
		t.Errorf("CSV: got first row %v, want %s, its user agent defused and 1 attempt", newest, set[2099].ID)
	}
	r := set[2099]
	if got, want := newest[len(newest)-7:len(newest)-1], []string{strconv.Itoa(r.CacheReadTokens), strconv.Itoa(r.CacheWriteTokens),
		strconv.Itoa(r.CacheWrite1hTokens), strconv.FormatFloat(r.SavedUSD, 'f', -1, 64), strconv.Itoa(r.CacheDropped), r.Affinity}; !slices.Equal(got, want) {
		t.Errorf("CSV: got the prompt cache's columns %v, want %v", got, want)
	}
	// The client's request id (issue 47), last: a record it named, and one it did not.
	for i, line := range lines[1:] {
		if r := set[len(set)-1-i]; line[len(line)-1] != text(r.RequestID) || r.RequestID == "" {
			t.Fatalf("CSV: row %d: got request_id %q, want %q", i, line[len(line)-1], r.RequestID)
		}
	}
}

func testTail(t *testing.T, open openFunc) {
	st := open(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu  sync.Mutex
		got []string
	)
	seen := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
	done := make(chan error, 1)
	before := rec(1000, time.Now().Add(-time.Second))
	if err := st.Write(ctx, []Record{before}); err != nil { // before the tail: not shown
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	go func() {
		done <- Tail(ctx, st, Filter{Alias: "smart"}, 10*time.Millisecond, func(r Record) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, r.ID)
			return nil
		})
	}()
	waitFor := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for len(seen()) < n {
			if time.Now().After(deadline) {
				t.Fatalf("the tail showed %v, want %d records", seen(), n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	var want []string
	for i := 1; i <= 10; i++ {
		r := rec(3*i+1, start.Add(time.Duration(i)*time.Second)) // alias smart, times ahead
		o := rec(3*i, start.Add(time.Duration(i)*time.Second))   // alias fast: filtered out
		if err := st.Write(ctx, []Record{r, o}); err != nil {
			t.Fatal(err)
		}
		want = append(want, r.ID)
	}
	waitFor(len(want))
	late := rec(100, start.Add(500*time.Millisecond)) // older than what was shown, written after
	if err := st.Write(ctx, []Record{late}); err != nil {
		t.Fatal(err)
	}
	want = append(want, late.ID)
	waitFor(len(want))
	time.Sleep(50 * time.Millisecond) // a few more polls: nothing twice
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Tail: %v", err)
	}
	if g := seen(); !slices.Equal(g, want) {
		t.Errorf("the tail showed %v, want %v (each once, in order of arrival)", g, want)
	}
	// each's error ends the tail with it.
	stop := errors.New("client left")
	go func() {
		done <- Tail(context.Background(), st, Filter{Alias: "cheap"}, time.Millisecond, func(Record) error { return stop })
	}()
	time.Sleep(20 * time.Millisecond)
	if err := st.Write(context.Background(), []Record{rec(2, time.Now().Add(time.Second))}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, stop) {
		t.Fatalf("got %v, want each's error", err)
	}
}
