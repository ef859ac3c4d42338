package server_test

import (
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
	"github.com/sluice-gw/sluice/internal/server"
)

// gated is an upstream that holds its first answer until the test opens the gate: the
// identical requests that come meanwhile are known to overlap it, without a sleep.
type gated struct {
	mock    *mockllm.Server
	calls   atomic.Int64
	arrived chan struct{} // closed when the first call arrived
	open    chan struct{} // closed by the test
	once    sync.Once
}

func (g *gated) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.calls.Add(1) == 1 {
		g.once.Do(func() { close(g.arrived) })
		select {
		case <-g.open:
		case <-r.Context().Done():
			return
		}
	}
	g.mock.ServeHTTP(w, r)
}

// gatedGateway serves cacheConfig in front of a gated mock upstream.
func gatedGateway(t *testing.T, extra ...string) (*gated, *server.Server, *httptest.Server) {
	t.Helper()
	up := &gated{mock: mockllm.New(mockllm.Options{}), arrived: make(chan struct{}), open: make(chan struct{})}
	ms := httptest.NewServer(up)
	t.Cleanup(ms.Close)
	srv := buildConfig(t, cacheConfig+strings.Join(extra, ""), map[string]string{"MOCK_URL": ms.URL}, io.Discard)
	hs := listen(srv)
	t.Cleanup(hs.Close)
	return up, srv, hs
}

// waitFor polls cond, which the server's own state makes true, for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Identical requests that arrive while the first is being answered wait for its answer and
// get it whole (X-Sluice-Cache: coalesced), streamed or not; the upstream is called once. A
// waiting client that leaves disturbs no one.
func TestCacheCoalescesIdenticalMisses(t *testing.T) {
	up, srv, hs := gatedGateway(t)

	body := func(stream bool) string {
		b := `{"model":"cached","messages":[{"role":"user","content":"Together."}]`
		if stream {
			b += `,"stream":true`
		}
		return b + "}"
	}
	const n = 12
	replies := make([]cacheReply, n)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); replies[0] = cachePost(t, hs.URL, "/v1/chat/completions", body(true)) }()
	<-up.arrived
	for i := 1; i < n; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); replies[i] = cachePost(t, hs.URL, "/v1/chat/completions", body(i%2 == 0)) }()
	}
	// One more follower, whose client leaves while it waits.
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "POST", hs.URL+"/v1/chat/completions", strings.NewReader(body(true)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		gone <- err
	}()
	waitFor(t, "every follower to wait", func() bool { return server.CacheWaiting(srv) == n })
	cancel()
	<-gone
	waitFor(t, "the follower that left to stop waiting", func() bool { return server.CacheWaiting(srv) == n-1 })
	close(up.open)
	wg.Wait()

	if got := up.calls.Load(); got != 1 {
		t.Errorf("got %d upstream calls, want 1", got)
	}
	lead := replies[0]
	if lead.status != 200 || lead.header.Get("X-Sluice-Cache") != "miss" || !strings.Contains(lead.body, "[DONE]") {
		t.Fatalf("leader: got %d %q:\n%s\nwant a whole 200 miss", lead.status, lead.header.Get("X-Sluice-Cache"), lead.body)
	}
	plain := cachePost(t, hs.URL, "/v1/chat/completions", body(false)) // a hit now: the plain body
	for i, r := range replies[1:] {
		want := lead.body // followers with an even index stream
		if (i+1)%2 == 1 {
			want = plain.body
		}
		if r.status != 200 || r.header.Get("X-Sluice-Cache") != "coalesced" || r.body != want {
			t.Errorf("follower %d: got %d %q:\n%s\nwant 200 coalesced with the leader's answer:\n%s", i+1, r.status,
				r.header.Get("X-Sluice-Cache"), r.body, want)
		}
	}
}

// When the leader gets no answer (its upstream fails), one waiting request takes over and
// the rest wait for it; with no Redis, on this replica.
func TestCacheCoalescingLeaderFails(t *testing.T) {
	up := newPausing(0, true)
	ms := httptest.NewServer(up)
	t.Cleanup(ms.Close)
	srv := buildConfig(t, cacheConfig, map[string]string{"MOCK_URL": ms.URL}, io.Discard)
	hs := listen(srv)
	t.Cleanup(hs.Close)
	t.Cleanup(up.release)
	body := `{"model":"cached","messages":[{"role":"user","content":"Leader fails."}],"stream":true}`

	var lead cacheReply
	leaderDone := make(chan struct{})
	go func() { defer close(leaderDone); lead = cachePost(t, hs.URL, "/v1/chat/completions", body) }()
	<-up.arrived
	const n = 5
	replies := make([]cacheReply, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); replies[i] = cachePost(t, hs.URL, "/v1/chat/completions", body) }()
	}
	waitFor(t, "every follower to wait", func() bool { return server.CacheWaiting(srv) == n })
	up.release() // the leader's upstream fails
	<-leaderDone
	wg.Wait()
	if lead.status == 200 {
		t.Errorf("leader: got 200, want its upstream's failure")
	}
	misses := 0
	for i, r := range replies {
		switch r.header.Get("X-Sluice-Cache") {
		case "miss":
			misses++
		case "coalesced":
		default:
			t.Errorf("request %d: got %q, want miss or coalesced", i, r.header.Get("X-Sluice-Cache"))
		}
		if r.status != 200 || !strings.Contains(r.body, "[DONE]") {
			t.Errorf("request %d: got %d:\n%s\nwant the whole answer", i, r.status, r.body)
		}
	}
	if misses != 1 || up.calls.Load() != 2 {
		t.Errorf("got %d new leaders and %d upstream calls, want 1 and 2 (the leader that failed, its successor)", misses, up.calls.Load())
	}
}

// A streamed request that waits for an identical one gets keepalives meanwhile (a load
// balancer does not cut it), then the answer; X-Sluice-Cache and Age arrive as trailers.
func TestCacheWaitingStreamKeepsAlive(t *testing.T) {
	up, srv, hs := gatedGateway(t, "heartbeat_interval: 20ms\n")
	body := `{"model":"cached","messages":[{"role":"user","content":"Keep me."}],"stream":true}`
	var lead cacheReply
	done := make(chan struct{})
	go func() { defer close(done); lead = cachePost(t, hs.URL, "/v1/chat/completions", body) }()
	<-up.arrived
	req, _ := http.NewRequest("POST", hs.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "test")
	resp, err := http.DefaultClient.Do(req) // returns once a keepalive sent the headers
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if server.CacheWaiting(srv) != 1 {
		t.Fatalf("got %d waiting, want the follower waiting while its headers left", server.CacheWaiting(srv))
	}
	if _, ok := resp.Trailer["X-Sluice-Cache"]; !ok { // net/http moves the Trailer header there
		t.Errorf("got trailers %v, want X-Sluice-Cache declared", resp.Trailer)
	}
	close(up.open)
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	<-done
	got := volatile.ReplaceAllString(string(b), `"created$1":0`)
	if !strings.HasPrefix(got, ": keepalive") || strip(got) != strip(lead.body) {
		t.Errorf("got:\n%s\nwant keepalives, then the leader's answer:\n%s", got, lead.body)
	}
	if got := resp.Trailer.Get("X-Sluice-Cache"); got != "coalesced" {
		t.Errorf("got trailer X-Sluice-Cache %q, want coalesced", got)
	}
}

// strip drops the keepalives of a stream.
func strip(s string) string { return strings.ReplaceAll(s, ": keepalive\n\n", "") }
