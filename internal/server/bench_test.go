package server_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/config"
	gw "github.com/sluice-gw/sluice/internal/gateway"
	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/server"
)

// BenchmarkChat is the proxy path of one request, client to gateway to mock upstream and
// back, all over loopback, with the embedded defaults' features (redaction on). The mock
// sends make bench's answer (20 text chunks) at once. Its ns/op and allocs/op are the whole
// round trip, mock and client included; compare them before and after a change to the path.
func BenchmarkChat(b *testing.B) {
	ms := httptest.NewServer(mockllm.New(mockllm.Options{}))
	defer ms.Close()
	srv := benchServer(b, ms.URL)
	b.Run("nonstream", func(b *testing.B) { benchPost(b, srv, false) })
	b.Run("stream", func(b *testing.B) { benchPost(b, srv, true) })
}

// BenchmarkChatLong is BenchmarkChat at a realistic answer length (issue 36): 500 tokens,
// 2,000 bytes in 100 deltas of 20. Its nonstream case is the default path of a plain
// request, an upstream stream assembled into one body, where the cost is per upstream
// event. cpu-µs/op is the process's user+system time per request (mock and client
// included), which other processes on the machine do not inflate as they do ns/op.
func BenchmarkChatLong(b *testing.B) {
	ms := httptest.NewServer(mockllm.New(mockllm.Options{}))
	defer ms.Close()
	srv := benchServerTarget(b, ms.URL, "mock/text?len=2000&chunk=20", "")
	b.Run("nonstream", func(b *testing.B) { benchPost(b, srv, false) })
	b.Run("stream", func(b *testing.B) { benchPost(b, srv, true) })
}

// BenchmarkCacheHit is BenchmarkChat answered from the response cache (issue 24): after the
// first request, every one is a hit, replayed on the wire without calling the mock. Against
// BenchmarkChat, the difference is what a hit saves per request.
func BenchmarkCacheHit(b *testing.B) {
	ms := httptest.NewServer(mockllm.New(mockllm.Options{}))
	defer ms.Close()
	srv := benchServerWith(b, ms.URL, ", cache: {}")
	b.Run("nonstream", func(b *testing.B) { benchPost(b, srv, false) })
	b.Run("stream", func(b *testing.B) { benchPost(b, srv, true) })
}

// BenchmarkChatKeyed is BenchmarkChat with a virtual key that has rate limits (in memory):
// the path of a gateway with keys on, where the key's admission reads the request.
func BenchmarkChatKeyed(b *testing.B) {
	ms := httptest.NewServer(mockllm.New(mockllm.Options{}))
	defer ms.Close()
	key := auth.NewSecret()
	srv := benchServerWith(b, ms.URL, "}\nkeys:\n  - {name: bench, hash: "+auth.Hash(key)+", models: [\"*\"], limits: {rpm: 100000000, tpm: 100000000000}")
	b.Run("nonstream", func(b *testing.B) { benchPostKey(b, srv, false, key) })
	b.Run("stream", func(b *testing.B) { benchPostKey(b, srv, true, key) })
}

// BenchmarkChatLogged is BenchmarkChat with the request log on, in a SQLite file, capturing
// metadata (issue 33): against BenchmarkChat, what a record costs the request path (its
// build and a queue; the writes are another goroutine's).
func BenchmarkChatLogged(b *testing.B) {
	ms := httptest.NewServer(mockllm.New(mockllm.Options{}))
	defer ms.Close()
	srv := benchServerWith(b, ms.URL, "}\nlogs: {url: \"sqlite://"+filepath.Join(b.TempDir(), "logs.db")+"\", queue: 100000")
	b.Run("nonstream", func(b *testing.B) { benchPost(b, srv, false) })
	b.Run("stream", func(b *testing.B) { benchPost(b, srv, true) })
}

// benchServer is the gateway of the benchmarks, in front of the mock at mockURL.
func benchServer(b *testing.B, mockURL string) *server.Server {
	return benchServerWith(b, mockURL, "")
}

// benchServerWith is benchServer with more settings for the default alias (a flow
// mapping's members, after its targets).
func benchServerWith(b *testing.B, mockURL, alias string) *server.Server {
	return benchServerTarget(b, mockURL, "mock/text?len=200&chunk=10", alias)
}

// benchServerTarget is benchServerWith with the alias's target.
func benchServerTarget(b *testing.B, mockURL, target, alias string) *server.Server {
	b.Helper()
	cfg, err := config.ParseWith([]byte(`
providers:
  mock: {kind: openai-compatible, base_url: "${MOCK_URL}/v1"}
models:
  default: {targets: ["`+target+`"]`+alias+`}
`), "bench.yaml", func(k string) (string, bool) { return mockURL, k == "MOCK_URL" })
	if err != nil {
		b.Fatal(err)
	}
	srv, err := gw.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() }) // the request log's writer, a store's connections
	return srv
}

// benchPost serves srv over loopback and posts the benchmark's chat request to it in
// parallel, b.N times in all.
func benchPost(b *testing.B, srv http.Handler, stream bool) { benchPostKey(b, srv, stream, "") }

// benchPostKey is benchPost with key as the Bearer key ("": none).
func benchPostKey(b *testing.B, srv http.Handler, stream bool, key string) {
	gs := httptest.NewServer(srv)
	defer gs.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	body := `{"model":"default","messages":[{"role":"user","content":"hi"}]}`
	if stream {
		body = `{"model":"default","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	defer func() {
		b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	}()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, gs.URL+"/v1/chat/completions", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if key != "" {
				req.Header.Set("Authorization", "Bearer "+key)
			}
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || n < 200 {
				b.Errorf("status %d, %d bytes", resp.StatusCode, n)
				return
			}
		}
	})
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var u syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
