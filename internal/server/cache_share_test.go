package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
	"github.com/sluice-gw/sluice/internal/server"
)

// pausing is an upstream whose first call stops at a gate the test opens: before its
// headers (at 0) or after at frames of its stream; with fail, it then answers 503. Later
// calls are the mock's. The test knows the identical requests it sends meanwhile overlap
// the first, without a sleep.
type pausing struct {
	mock     *mockllm.Server
	at       int
	fail     bool
	calls    atomic.Int64
	canceled atomic.Bool   // the first call's request ended while it paused
	arrived  chan struct{} // closed when the first call paused
	open     chan struct{} // closed by release
	once     sync.Once
}

// release opens the gate (a test that failed early too, so its servers can close).
func (p *pausing) release() { p.once.Do(func() { close(p.open) }) }

func newPausing(at int, fail bool) *pausing {
	return &pausing{mock: mockllm.New(mockllm.Options{}), at: at, fail: fail, arrived: make(chan struct{}), open: make(chan struct{})}
}

func (p *pausing) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.calls.Add(1) != 1 {
		p.mock.ServeHTTP(w, r)
		return
	}
	if p.at == 0 {
		if !p.pause(r) {
			return
		}
		if p.fail {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error","code":null}}`)
			return
		}
	}
	p.mock.ServeHTTP(&pauseWriter{ResponseWriter: w, p: p, r: r}, r)
}

// pause closes arrived and waits for open; false: the request ended first.
func (p *pausing) pause(r *http.Request) bool {
	close(p.arrived)
	select {
	case <-p.open:
		return true
	case <-r.Context().Done():
		p.canceled.Store(true)
		return false
	}
}

// pauseWriter pauses the first call after p.at frames.
type pauseWriter struct {
	http.ResponseWriter
	p      *pausing
	r      *http.Request
	frames int
	gone   bool
}

func (pw *pauseWriter) Write(b []byte) (int, error) {
	if pw.gone {
		return 0, io.ErrClosedPipe
	}
	n, err := pw.ResponseWriter.Write(b)
	before := pw.frames
	pw.frames += bytes.Count(b, []byte("data:"))
	if pw.p.at > 0 && before < pw.p.at && pw.frames >= pw.p.at {
		pw.Flush()
		pw.gone = !pw.p.pause(pw.r)
	}
	return n, err
}

func (pw *pauseWriter) Flush() { pw.ResponseWriter.(http.Flusher).Flush() }

// shareFleet is two replicas on one Redis in front of up.
func shareFleet(t *testing.T, up http.Handler, extra ...string) ([2]string, [2]*server.Server) {
	t.Helper()
	rs := redistest.Start(t)
	ms := httptest.NewServer(up)
	t.Cleanup(ms.Close)
	yaml := cacheConfig + "redis: {url: \"${REDIS_URL}\", timeout: 2s, on_failure: open}\n" + strings.Join(extra, "")
	vars := map[string]string{"MOCK_URL": ms.URL, "REDIS_URL": rs.URL}
	var urls [2]string
	var srvs [2]*server.Server
	for i := range urls {
		urls[i], srvs[i] = serveServer(t, yaml, vars, time.Minute, nil)
	}
	if p, ok := up.(*pausing); ok {
		t.Cleanup(p.release) // first: the servers' close waits for their requests
	}
	return urls, srvs
}

func waiting(srvs [2]*server.Server) int {
	return server.CacheWaiting(srvs[0]) + server.CacheWaiting(srvs[1])
}

// shareAsk is one of the requests of a test: its wire and delivery. The cache key is the
// request as its wire decodes it, so each wire's requests share among themselves.
type shareAsk struct{ path, extra, model string }

var (
	chatAsks      = []shareAsk{{"/v1/chat/completions", `,"stream":true`, ""}, {"/v1/chat/completions", ``, ""}}
	messagesAsks  = []shareAsk{{"/v1/messages", `,"stream":true`, ""}, {"/v1/messages", ``, ""}}
	responsesAsks = []shareAsk{{"/v1/responses", `,"stream":true`, ""}, {"/v1/responses", ``, ""}}
	// heldAsks are chat's on an alias whose output guardrail holds the round until its verdict.
	heldAsks  = []shareAsk{{"/v1/chat/completions", `,"stream":true`, "held"}, {"/v1/chat/completions", ``, "held"}}
	shareAsks = chatAsks
)

func (a shareAsk) body(text string) string {
	model := `"cached"`
	if a.model != "" {
		model = `"` + a.model + `"`
	}
	switch a.path {
	case "/v1/responses":
		return `{"model":` + model + `,"input":"` + text + `"` + a.extra + `}`
	case "/v1/messages":
		return `{"model":` + model + `,"max_tokens":500,"messages":[{"role":"user","content":"` + text + `"}]` + a.extra + `}`
	}
	return `{"model":` + model + `,"messages":[{"role":"user","content":"` + text + `"}]` + a.extra + `}`
}

// cacheOf is X-Sluice-Cache.
func cacheOf(r cacheReply) string { return r.header.Get("X-Sluice-Cache") }

// checkShared checks that every reply is the whole answer its wire's hit gives (asked
// afterwards, on the other replica), each X-Sluice-Cache one of want, and returns how many
// were misses.
func checkShared(t *testing.T, urls [2]string, text string, replies []cacheReply, asks []shareAsk, want ...string) int {
	t.Helper()
	hits := map[shareAsk]cacheReply{}
	for _, a := range asks[:2] {
		hits[a] = cachePost(t, urls[1], a.path, a.body(text))
		if got := cacheOf(hits[a]); got != "hit" {
			t.Fatalf("%s%s afterwards: got %d %q, want a hit:\n%s", a.path, a.extra, hits[a].status, got, hits[a].body)
		}
	}
	misses := 0
	for i, r := range replies {
		h := hits[asks[i]]
		ok := false
		for _, w := range want {
			ok = ok || cacheOf(r) == w
		}
		if cacheOf(r) == "miss" {
			misses++
		}
		if r.status != 200 || !ok || strip(r.body) != strip(h.body) {
			t.Errorf("request %d (%s%s): got %d %q:\n%s\nwant 200, one of %v, with the whole answer:\n%s",
				i, asks[i].path, asks[i].extra, r.status, cacheOf(r), r.body, want, h.body)
		}
	}
	return misses
}

func sharePost(t *testing.T, url string, a shareAsk, text string) cacheReply {
	return cachePost(t, url, a.path, a.body(text))
}

// follow sends n identical requests, streamed and not, each to the replica at(i) names;
// wg.Wait waits for their replies.
func follow(t *testing.T, set []shareAsk, n int, text string, at func(i int) string) ([]cacheReply, []shareAsk, *sync.WaitGroup) {
	replies, asks := make([]cacheReply, n), make([]shareAsk, n)
	var wg sync.WaitGroup
	for i := range n {
		asks[i] = set[i%2]
		wg.Add(1)
		go func() { defer wg.Done(); replies[i] = sharePost(t, at(i), asks[i], text) }()
	}
	return replies, asks, &wg
}

// 50 identical requests at once across two replicas (streamed and not) reach the upstream
// once, and every client gets the whole answer on its wire: the followers on the leader's
// replica and on the other, which reads the leader's answer from Redis as it is written.
// A follower that leaves disturbs no one. Likewise on the Messages and Responses wires.
func TestCacheCoalescesAcrossReplicas(t *testing.T) {
	for _, tt := range []struct {
		name string
		asks []shareAsk
		n    int
	}{{"chat", chatAsks, 50}, {"messages", messagesAsks, 10}, {"responses", responsesAsks, 10}} {
		t.Run(tt.name, func(t *testing.T) {
			up := newPausing(0, false)
			urls, srvs := shareFleet(t, up)
			const text = "All at once."
			replies, asks := make([]cacheReply, tt.n), make([]shareAsk, tt.n)
			var wg sync.WaitGroup
			asks[0] = tt.asks[0]
			wg.Add(1)
			go func() { defer wg.Done(); replies[0] = sharePost(t, urls[0], asks[0], text) }()
			<-up.arrived // the leader is the first
			// The first follower on the other replica, which reads the leader's answer from
			// Redis for that replica, leaves: the others there are not disturbed.
			ctx, cancel := context.WithCancel(context.Background())
			gone := make(chan struct{})
			go func() {
				defer close(gone)
				req, _ := http.NewRequestWithContext(ctx, "POST", urls[1]+asks[0].path, strings.NewReader(asks[0].body(text)))
				req.Header.Set("Content-Type", "application/json")
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
			waitFor(t, "the first follower on the other replica", func() bool { return waiting(srvs) == 1 })
			for i := 1; i < tt.n; i++ {
				asks[i] = tt.asks[i%2]
				wg.Add(1)
				go func() { defer wg.Done(); replies[i] = sharePost(t, urls[i%2], asks[i], text) }()
			}
			waitFor(t, "every follower to wait", func() bool { return waiting(srvs) == tt.n })
			cancel()
			<-gone
			waitFor(t, "the follower that left to stop", func() bool { return waiting(srvs) == tt.n-1 })
			up.release()
			wg.Wait()
			if misses := checkShared(t, urls, text, replies, asks, "miss", "coalesced"); misses != 1 {
				t.Errorf("got %d misses, want 1 (the leader)", misses)
			}
			if got := up.calls.Load(); got != 1 {
				t.Errorf("got %d upstream calls, want 1", got)
			}
		})
	}
}

// The leader's client leaving mid-stream does not stop its round: every follower, on both
// replicas, gets the whole answer, and it is stored. Held: the leader's round is held for
// its output guardrail, its client has had only keepalives when it leaves.
func TestCacheLeaderLeavesMidstream(t *testing.T) {
	for _, tt := range []struct {
		name string
		asks []shareAsk
	}{{"live", shareAsks}, {"held", heldAsks}} {
		t.Run(tt.name, func(t *testing.T) {
			up := newPausing(4, false)
			// Keepalives while the upstream pauses: the writes that tell the leader's replica
			// its client left (presence).
			urls, srvs := shareFleet(t, up, "heartbeat_interval: 20ms\n")
			const text = "Leader leaves."
			lead := tt.asks[0]
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", urls[0]+lead.path, strings.NewReader(lead.body(text)))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			<-up.arrived
			buf := make([]byte, 64)
			if _, err := resp.Body.Read(buf); err != nil { // the answer's start, or a keepalive
				t.Fatal(err)
			}
			const n = 8
			replies, asks, wg := follow(t, tt.asks, n, text, func(i int) string { return urls[(i+1)%2] })
			waitFor(t, "every follower to wait", func() bool { return waiting(srvs) == n })
			cancel()
			resp.Body.Close()
			waitFor(t, "the leader's replica to see its client leave", func() bool { return server.CacheLeadersLeft(srvs[0]) == 1 })
			up.release()
			wg.Wait()
			checkShared(t, urls, text, replies, asks, "coalesced")
			if up.canceled.Load() || up.calls.Load() != 1 {
				t.Errorf("got the upstream call canceled %v, %d calls; want it whole, 1 call", up.canceled.Load(), up.calls.Load())
			}
		})
	}
}

// A leader whose upstream fails hands the key to one follower, which calls the upstream
// itself; every follower, on both replicas, is answered.
func TestCacheLeaderFailsHandsOver(t *testing.T) {
	up := newPausing(0, true)
	urls, srvs := shareFleet(t, up)
	const text = "Hand over."
	var lead cacheReply
	done := make(chan struct{})
	go func() { defer close(done); lead = sharePost(t, urls[0], shareAsks[1], text) }()
	<-up.arrived
	const n = 10
	replies, asks, wg := follow(t, shareAsks, n, text, func(i int) string { return urls[i%2] })
	waitFor(t, "every follower to wait", func() bool { return waiting(srvs) == n })
	up.release()
	wg.Wait()
	<-done
	if lead.status == 200 {
		t.Errorf("leader: got 200, want its upstream's failure")
	}
	if misses := checkShared(t, urls, text, replies, asks, "miss", "coalesced"); misses != 1 {
		t.Errorf("got %d new leaders, want 1", misses)
	}
	if got := up.calls.Load(); got != 2 {
		t.Errorf("got %d upstream calls, want 2 (the leader that failed, its successor)", got)
	}
}
