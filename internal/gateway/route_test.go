package gateway_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// slowable is an OpenAI upstream that answers a recorded Chat stream after a delay the test
// sets (the latency toxic of a toxiproxy), fails the calls fail says, and holds a stream
// open after its first chunk while hold is set, until release is closed.
type slowable struct {
	*httptest.Server
	delay   atomic.Int64 // ns before the headers
	calls   atomic.Int64
	fail    func(n int64) bool // n: the call's number, from 0; nil: never
	hold    atomic.Bool
	held    atomic.Int64
	release chan struct{}
}

func newSlowable(t testing.TB) *slowable {
	t.Helper()
	answer, err := os.ReadFile(filepath.Join("testdata", "openai-chat-text.sse"))
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(string(answer), "\n\n")
	u := &slowable{release: make(chan struct{})}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n := u.calls.Add(1) - 1
		select {
		case <-time.After(time.Duration(u.delay.Load())):
		case <-r.Context().Done():
			return
		}
		if u.fail != nil && u.fail(n) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(500)
			io.WriteString(w, `{"error":{"message":"upstream failed","type":"server_error"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, first+"\n\n")
		w.(http.Flusher).Flush()
		if u.hold.Load() {
			u.held.Add(1)
			defer u.held.Add(-1)
			select {
			case <-u.release:
			case <-r.Context().Done():
				return
			}
		}
		io.WriteString(w, rest)
	}))
	t.Cleanup(func() {
		select {
		case <-u.release:
		default:
			close(u.release)
		}
		u.Close()
	})
	return u
}

func (u *slowable) slow(d time.Duration) { u.delay.Store(int64(d)) }

// routeGateway serves one alias, "pool", whose group of a/m and b/m (each its own upstream)
// picks by group (the YAML of the group's mapping), then falls back to b/m.
func routeGateway(t *testing.T, group string) (url string, a, b *slowable) {
	t.Helper()
	a, b = newSlowable(t), newSlowable(t)
	yaml := `
providers:
  a: {kind: openai, base_url: "${A}/v1", api_key: sk-test-a}
  b: {kind: openai, base_url: "${B}/v1", api_key: sk-test-b}
prices:
  a/m: {input: 1, output: 2}
  b/m: {input: 10, output: 20}
models:
  pool:
    affinity: off
    targets:
      - ` + group + `
      - b/m
`
	g := serve(t, yaml, map[string]string{"A": a.URL, "B": b.URL}, io.Discard)
	return g.URL, a, b
}

// served sends n streamed requests one after the other and counts the targets that served
// them (X-Sluice-Target); chat fails the test on any status but 200.
func served(t *testing.T, url string, n int) map[string]int {
	t.Helper()
	return servedRound(t, []string{url}, n)
}

// servedRound is served over several gateways, round-robin.
func servedRound(t *testing.T, urls []string, n int) map[string]int {
	t.Helper()
	got := map[string]int{}
	for i := range n {
		target, text, frames := chat(t, urls[i%len(urls)], "pool")
		if text == "" || len(frames) > 0 {
			t.Fatalf("an answer with text %q and frames %v", text, frames)
		}
		got[target]++
	}
	return got
}

// route: latency, with a delay on one target's upstream, then on the other's: at least 85%
// of the next 200 requests after each change go to the fast one (issue 49).
func TestRouteLatency(t *testing.T) {
	url, a, b := routeGateway(t, `{group: [a/m, b/m], route: latency}`)
	warm := served(t, url, 20)
	a.slow(300 * time.Millisecond)
	one := served(t, url, 200)
	a.slow(0)
	b.slow(300 * time.Millisecond)
	two := served(t, url, 200)
	t.Logf("warm-up %v; a slowed: %v; a restored and b slowed: %v", warm, one, two)
	if one["b/m"] < 170 {
		t.Errorf("a slowed by 300 ms: b/m served %d of 200, want at least 170", one["b/m"])
	}
	if two["a/m"] < 170 {
		t.Errorf("b slowed by 300 ms: a/m served %d of 200, want at least 170", two["a/m"])
	}
}

// route: least_busy, with a stream held open on a/m: new requests go to b/m, and once it
// ends, both serve again.
func TestRouteLeastBusy(t *testing.T) {
	url, a, b := routeGateway(t, `{group: [a/m, b/m], route: least_busy}`)
	a.hold.Store(true)
	var wg sync.WaitGroup
	defer wg.Wait()
	body := `{"model":"pool","stream":true,"messages":[{"role":"user","content":"Hold on."}]}`
	var started, ended atomic.Int64
	for a.held.Load() == 0 { // a tie goes either way: until one is held on a/m
		bc := b.calls.Load()
		started.Add(1)
		wg.Go(func() {
			defer ended.Add(1)
			if res, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body)); err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		})
		for a.held.Load() == 0 && b.calls.Load() == bc {
			time.Sleep(time.Millisecond)
		}
	}
	// The streams b/m served end before the test's requests: one still in flight there would
	// tie with a/m's held stream, and a tie goes either way.
	for ended.Load() < started.Load()-1 {
		time.Sleep(time.Millisecond)
	}
	a.hold.Store(false)
	busy := served(t, url, 50)
	close(a.release)
	wg.Wait()
	after := served(t, url, 50)
	t.Logf("a holding a stream: %v; released: %v", busy, after)
	if busy["b/m"] != 50 {
		t.Errorf("a/m holding a stream: b/m served %d of 50, want all", busy["b/m"])
	}
	if after["a/m"] == 0 {
		t.Errorf("a/m's stream ended: a/m served none of 50, want some")
	}
}

// route: cost: the cheap target (a/m) serves until its first-token p95 passes max_ttft,
// then the dear one does.
func TestRouteCost(t *testing.T) {
	url, a, _ := routeGateway(t, `{group: [a/m, b/m], route: cost, max_ttft: 150ms}`)
	cheap := served(t, url, 100)
	a.slow(300 * time.Millisecond)
	// The first slow answer of a/m puts its p95 over the bound: a few probes at most after.
	slowed := served(t, url, 100)
	t.Logf("a/m fast: %v; a/m at +300 ms: %v", cheap, slowed)
	if cheap["a/m"] < 85 {
		t.Errorf("a/m cheap and fast: served %d of 100, want at least 85 (probes of b/m aside)", cheap["a/m"])
	}
	if slowed["a/m"] > 5 {
		t.Errorf("a/m over max_ttft: served %d of 100, want at most 5", slowed["a/m"])
	}
}

// Adaptive health: a/m failing 30% of its calls gets under 15% of the traffic, and every
// client gets its answer (b/m after a/m's failure).
func TestRouteAdaptiveHealth(t *testing.T) {
	url, a, _ := routeGateway(t, `{group: [a/m, b/m]}`)
	a.fail = func(n int64) bool { return n%10 == 0 || n%10 == 3 || n%10 == 6 }
	warm := served(t, url, 100)
	before := a.calls.Load()
	got := served(t, url, 300)
	share := float64(a.calls.Load()-before) / 300
	t.Logf("warm-up %v; then %v, a/m called for %.1f%% of requests", warm, got, 100*share)
	if share >= 0.15 {
		t.Errorf("a/m failing 30%%: called for %.1f%% of requests, want under 15%%", 100*share)
	}
}
