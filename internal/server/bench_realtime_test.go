package server_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/sluice-gw/sluice/internal/config"
	gw "github.com/sluice-gw/sluice/internal/gateway"
)

// heldSessions is how many sessions or streams BenchmarkHeldMemory holds at once.
const heldSessions = 200

// BenchmarkHeldMemory reports the memory the process holds per held Realtime session
// (B/held-realtime) and per held SSE chat stream (B/held-sse): heldSessions of each opened
// over loopback and left waiting (a session after its session.created, a stream after its
// first line, its next delta minutes away), both served by sim, the heap in use and the
// goroutines' stacks after a GC, less before. The process holds both ends of each
// connection: the figures count the gateway's side and the client's (docs/realtime.md).
//
//	go test -run '^$' -bench HeldMemory -benchtime 1x ./internal/server
func BenchmarkHeldMemory(b *testing.B) {
	cfg, err := config.ParseWith([]byte(`
heartbeat_interval: 100ms
providers:
  sim: {kind: sim}
models:
  voice: [sim/echo]
  held: ["sim/text?len=400&chunk=4&delay=10m"]
`), "bench.yaml", func(string) (string, bool) { return "", false })
	if err != nil {
		b.Fatal(err)
	}
	srv, err := gw.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	hs := listen(srv)
	defer srv.Close()
	defer hs.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := &http.Transport{MaxIdleConnsPerHost: heldSessions, MaxConnsPerHost: 0}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	var rt, sse float64
	for range b.N {
		rt += held(b, func() func() {
			c, _, err := websocket.Dial(ctx, strings.Replace(hs.URL, "http", "ws", 1)+"/v1/realtime?model=voice", nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := c.Read(ctx); err != nil { // session.created
				b.Fatal(err)
			}
			return func() { c.Close(websocket.StatusNormalClosure, "") }
		})
		sse += held(b, func() func() {
			req, _ := http.NewRequestWithContext(ctx, "POST", hs.URL+"/v1/chat/completions", strings.NewReader(chatBody("held", true, "")))
			req.Header.Set("Content-Type", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			r := bufio.NewReader(resp.Body)
			if _, err := r.ReadString('\n'); err != nil { // a keepalive, or the stream's first line
				b.Fatal(err)
			}
			return func() { resp.Body.Close() }
		})
	}
	b.ReportMetric(rt/float64(b.N), "B/held-realtime")
	b.ReportMetric(sse/float64(b.N), "B/held-sse")
}

// held opens heldSessions with open, each returning its close, and returns the bytes of
// heap in use and stacks per open one.
func held(b *testing.B, open func() func()) float64 {
	before := inUse()
	closes := make([]func(), 0, heldSessions)
	for range heldSessions {
		closes = append(closes, open())
	}
	after := inUse()
	for _, c := range closes {
		c()
	}
	return float64(after-before) / heldSessions
}

// inUse is the heap in use and the goroutines' stacks, after a GC.
func inUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse + m.StackInuse)
}
