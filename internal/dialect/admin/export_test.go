package admin

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/logstore"
	"github.com/sluice-gw/sluice/internal/sse"
)

// exportMemLimit is the bound on the exporting process (issue 50): 1 M records
// exported under 64 MB of resident memory.
const exportMemLimit = 64 << 20

// TestExportMemory exports SLUICE_EXPORT_RECORDS records (default 3,000; the size is
// 1,000,000, a few minutes to generate) of an SQLite log, one in ten with 2 KB of captured
// content, through the export's HTTP handler to a client that discards them, in JSONL and in
// CSV, each in a process of its own (this test's binary run again), and checks that every
// record arrived. Each export reports its process's peak resident memory (VmHWM) and peak
// Go heap; at 100,000 records or more, the test asserts the peak RSS under 64 MB: the
// export holds a page of records at a time, never all of them, so it does not grow with the
// log. SLUICE_EXPORT_DB keeps the generated log at that path (reused when it holds them).
func TestExportMemory(t *testing.T) {
	if os.Getenv("SLUICE_EXPORT_CHILD") != "" {
		exportChild(t)
		return
	}
	n := 3000
	if s := os.Getenv("SLUICE_EXPORT_RECORDS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	path := os.Getenv("SLUICE_EXPORT_DB")
	if path == "" {
		path = filepath.Join(t.TempDir(), "logs.db")
	}
	fillExport(t, path, n)
	for _, format := range []string{"jsonl", "csv"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestExportMemory$", "-test.v")
		cmd.Env = append(os.Environ(), "SLUICE_EXPORT_CHILD="+format, "SLUICE_EXPORT_DB="+path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the %s export: %v\n%s", format, err, out)
		}
		var lines, rss, heap, ms int64
		for _, l := range strings.Split(string(out), "\n") {
			if _, after, ok := strings.Cut(l, "export: "); ok {
				_, _ = fmt.Sscanf(after, "lines=%d rss=%d heap=%d ms=%d", &lines, &rss, &heap, &ms)
			}
		}
		want := int64(n)
		if format == "csv" {
			want++ // the header
		}
		if lines != want {
			t.Fatalf("the %s export: %d lines, want %d\n%s", format, lines, want, out)
		}
		t.Logf("%s export of %d records: peak RSS %.1f MB, peak Go heap %.1f MB, %v", format, n, float64(rss)/(1<<20), float64(heap)/(1<<20),
			time.Duration(ms)*time.Millisecond)
		if n >= 100_000 && rss > exportMemLimit {
			t.Errorf("%s export of %d records: peak RSS %.1f MB, want under %d MB", format, n, float64(rss)/(1<<20), exportMemLimit>>20)
		}
	}
}

// fillExport writes n records into the SQLite log at path, over the last 20 days, unless it
// holds them already.
func fillExport(t *testing.T, path string, n int) {
	ctx := context.Background()
	st, err := logstore.Open(ctx, logstore.Options{URL: "sqlite://" + path})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC()
	from := now.AddDate(0, 0, -20)
	if p, err := st.Query(ctx, logstore.Filter{From: from, To: now, Limit: 1, RequestID: fmt.Sprintf("exp_%07d", n-1)}); err == nil && len(p.Records) == 1 {
		return // filled by an earlier run
	}
	step := now.Sub(from) / time.Duration(n+1)
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 23) // 1 KB
	batch := make([]logstore.Record, 0, 1000)
	start := time.Now()
	for i := range n {
		r := logstore.Record{ID: fmt.Sprintf("exp_%07d", i), Time: from.Add(time.Duration(i+1) * step),
			KeyID: "key_" + strconv.Itoa(i%50), KeyName: "name_" + strconv.Itoa(i%50), Team: "team_" + strconv.Itoa(i%5),
			Wire: "chat", Method: "POST", Path: "/v1/chat/completions", Alias: "default", Target: "openai/gpt-4o-mini",
			Status: 200, TokensIn: 100 + i%1000, TokensOut: 50 + i%500, CostUSD: float64(i%100) / 1e4,
			DurationMS: float64(500 + i%3000), UserAgent: "openai-python/1.54.0", Capture: "metadata",
			Attempts: []logstore.Attempt{{Target: "openai/gpt-4o-mini", MS: 480, Status: 200}}}
		if i%10 == 0 {
			r.Capture = "content"
			r.Content = &logstore.Content{Request: text + strconv.Itoa(i), Answer: text, Cap: 32768}
		}
		batch = append(batch, r)
		if len(batch) == cap(batch) || i == n-1 {
			if err := st.Write(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	t.Logf("%d records generated in %v", n, time.Since(start).Round(time.Second))
}

// exportChild is the exporting process: it serves the export route as the gateway does (the
// op, then its Download's Serve) and reads it as a client, into io.Discard, counting the
// lines, while it samples the Go heap; it prints what it measured for the parent.
func exportChild(t *testing.T) {
	ctx := context.Background()
	st, err := logstore.Open(ctx, logstore.Options{URL: "sqlite://" + os.Getenv("SLUICE_EXPORT_DB")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a := API{Logs: st}
	var op Op
	for _, r := range a.Routes() {
		if r.Method == http.MethodGet && r.Path == "/admin/logs/export" {
			op = r.Op
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in := NewInput(func(string) string { return "" }, r.URL.Query())
		_, v, err := op(auth.WithPrincipal(r.Context(), auth.Bootstrap), in)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_ = v.(Stream).Serve(r.Context(), w, func() *sse.Writer { return nil })
	}))
	defer srv.Close()

	var peak atomic.Uint64
	done := make(chan struct{})
	go func() { // the heap's peak, every 5 ms
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	q := url.Values{"format": {os.Getenv("SLUICE_EXPORT_CHILD")}, "from": {time.Now().AddDate(0, 0, -21).UTC().Format(time.RFC3339)}}
	start := time.Now()
	resp, err := http.Get(srv.URL + "/admin/logs/export?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("export: %s: %s", resp.Status, b)
	}
	var lines int64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	close(done)
	fmt.Printf("export: lines=%d rss=%d heap=%d ms=%d\n", lines, vmHWM(t), peak.Load(), time.Since(start).Milliseconds())
}

// vmHWM is the process's peak resident memory so far, in bytes (Linux).
func vmHWM(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status: peak RSS is measured on Linux")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
