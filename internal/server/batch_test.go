package server_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/config"
	gw "github.com/sluice-gw/sluice/internal/gateway"
)

// flushLog is a ResponseWriter that keeps what each Flush sent.
type flushLog struct {
	mu      sync.Mutex
	h       http.Header
	body    bytes.Buffer
	flushed []string // the bytes each Flush sent
	sent    int
	calls   int // Flush calls, with or without bytes
	first   int // the call that sent the first bytes
	signal  chan struct{}
}

func (f *flushLog) Header() http.Header { return f.h }
func (f *flushLog) WriteHeader(int)     {}
func (f *flushLog) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.body.Write(b)
}
func (f *flushLog) Flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.body.Len() > f.sent && f.first == 0 {
		f.first = f.calls
	}
	if f.body.Len() > f.sent {
		f.flushed = append(f.flushed, string(f.body.Bytes()[f.sent:]))
		f.sent = f.body.Len()
	}
	select {
	case f.signal <- struct{}{}:
	default:
	}
}

// until waits for a Flush after which the flushed bytes hold want.
func (f *flushLog) until(t *testing.T, want string) []string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		f.mu.Lock()
		got := append([]string(nil), f.flushed...)
		f.mu.Unlock()
		if strings.Contains(strings.Join(got, ""), want) {
			return got
		}
		select {
		case <-f.signal:
		case <-deadline:
			t.Fatalf("never flushed %q; flushed %q", want, got)
		}
	}
}

// Events that came from the upstream in one read leave in one write, the headers with the
// first of them, and none is kept back while the gateway waits for the upstream: three deltas sent together, then a pause that
// ends only once the client has all three.
func TestStreamFlushesWhenUpstreamWaits(t *testing.T) {
	pause := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta, finish string) string {
			return `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":` + delta +
				`,"finish_reason":` + finish + `}]}` + "\n\n"
		}
		io.WriteString(w, chunk(`{"role":"assistant","content":""}`, "null"))
		w.(http.Flusher).Flush()
		io.WriteString(w, chunk(`{"content":"one "}`, "null")+chunk(`{"content":"two "}`, "null")+chunk(`{"content":"three "}`, "null"))
		w.(http.Flusher).Flush()
		<-pause
		io.WriteString(w, chunk(`{}`, `"stop"`)+"data: [DONE]\n\n")
	}))
	defer up.Close()
	defer close(pause)
	cfg, err := config.Parse([]byte("providers: {up: {kind: openai-compatible, base_url: \""+up.URL+"/v1\"}}\nmodels: {m: [up/m]}\n"), "batch.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := gw.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := &flushLog{h: http.Header{}, signal: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(chatBody("m", true, ""))))
	}()
	got := rec.until(t, `"three "`) // the upstream is still paused here
	var with []int
	for i, f := range got {
		if strings.Contains(f, `"one "`) || strings.Contains(f, `"three "`) {
			with = append(with, i)
		}
	}
	if len(with) != 1 {
		t.Errorf("the three deltas left in flushes %v of %q, want one", with, got)
	}
	rec.mu.Lock()
	if rec.first != 1 {
		t.Errorf("the first frames left with flush %d, want 1: the headers with them, not on their own", rec.first)
	}
	rec.mu.Unlock()
	pause <- struct{}{}
	<-done
	if body := rec.body.String(); !strings.HasSuffix(body, "data: [DONE]\n\n") || !strings.Contains(body, `"finish_reason":"stop"`) {
		t.Errorf("got body %q, want the whole stream", body)
	}
}
