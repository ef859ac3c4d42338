package telemetry

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuf is a bytes.Buffer safe for the LogWriter's goroutine and the test's.
type syncBuf struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLogWriter checks that held lines are written together, whole and in order, within the
// flush interval, when they outgrow the buffer, and at Close, and at once after it.
func TestLogWriter(t *testing.T) {
	var out syncBuf
	lw := NewLogWriter(&out, 20*time.Millisecond)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				fmt.Fprintf(lw, "line %d %d\n", g, i)
			}
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(out.String(), "\n") < 400 {
		if time.Now().After(deadline) {
			t.Fatalf("after 5 s, %d of 400 lines written", strings.Count(out.String(), "\n"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if out.writes > 10 {
		t.Errorf("400 short lines took %d writes", out.writes)
	}
	seen := map[string]bool{}
	last := map[string]int{}
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var g, i int
		if _, err := fmt.Sscanf(l, "line %d %d", &g, &i); err != nil {
			t.Fatalf("a line split or mixed: %q", l)
		}
		k := fmt.Sprint(g)
		if seen[l] || (last[k] != i) {
			t.Fatalf("line %q out of order or twice", l)
		}
		seen[l], last[k] = true, i+1
	}
	// A line longer than what is left of the buffer: what was held goes first, whole.
	big := strings.Repeat("x", logBuffer-10) + "\n"
	fmt.Fprint(lw, "before\n")
	fmt.Fprint(lw, big)
	lw.Close()
	if got := out.String(); !strings.HasSuffix(got, "before\n"+big) {
		t.Fatalf("the long line is not written whole after the one before it")
	}
	lw.Close() // a second Close does nothing
	fmt.Fprint(lw, "after close\n")
	if !strings.HasSuffix(out.String(), "after close\n") {
		t.Fatal("a line after Close is not written at once")
	}
}

// TestNewLoggerFlush checks that a logger on a file holds its lines until close, and that
// SLUICE_LOG_FLUSH=0 writes each at once.
func TestNewLoggerFlush(t *testing.T) {
	for _, flush := range []time.Duration{0, time.Hour} {
		path := filepath.Join(t.TempDir(), "log")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		log, closeLog := NewLogger(f, "json", flush)
		log.Info("hello")
		b, _ := os.ReadFile(path)
		if held := len(b) == 0; held != (flush > 0) {
			t.Errorf("flush %s: %d bytes written before close", flush, len(b))
		}
		closeLog()
		if b, _ := os.ReadFile(path); !strings.Contains(string(b), `"msg":"hello"`) {
			t.Errorf("flush %s: after close the file holds %q", flush, b)
		}
		f.Close()
	}
	for _, tc := range []struct {
		v    string
		want time.Duration
		bad  bool
	}{{"", 0, false}, {"0", 0, false}, {"1s", time.Second, false}, {"soon", 0, true}, {"-1s", 0, true}} {
		got, err := LogFlushEnv(func(string) string { return tc.v })
		if got != tc.want || (err != nil) != tc.bad {
			t.Errorf("SLUICE_LOG_FLUSH=%q: %s, %v", tc.v, got, err)
		}
	}
}
