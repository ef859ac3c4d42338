package gateway_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// shadowKey is the virtual key of the shadow tests, with a daily budget its real calls fit
// in and one shadow call alone would exceed.
const shadowKey = "shadow-test-key-Qw3rT7yU"

// shadowGateway serves alias "pool" from a/m, with shadow (YAML, "" for none) on it, a
// request log and the admin API; b/m costs ten million times a/m.
func shadowGateway(t testing.TB, shadow string, a, b *slowable) string {
	t.Helper()
	sum := sha256.Sum256([]byte(shadowKey))
	yaml := `
auth: {admin_token: ` + adminToken + `}
keys: [{name: shadowed, hash: ` + hex.EncodeToString(sum[:]) + `, budget: {daily_usd: 0.01}}]
providers:
  a: {kind: openai, base_url: "${A}/v1", api_key: sk-test-a}
  b: {kind: openai, base_url: "${B}/v1", api_key: sk-test-b}
prices:
  a/m: {input: 0.01, output: 0.02}
  b/m: {input: 100000, output: 200000}
logs: {url: "sqlite://` + filepath.Join(t.TempDir(), "logs.db") + `"}
models:
  pool: {targets: [a/m], affinity: off` + shadow + `}
`
	return serve(t, yaml, map[string]string{"A": a.URL, "B": b.URL}, io.Discard).URL
}

// ask sends a chat request for pool with the shadow key and X-Request-Id id (the answer's
// id derives from it), streamed or not, and returns the status, the X-Request-Id and the
// whole body, its "created" second zeroed (two gateways' clocks need not share it).
func ask(t testing.TB, url, id string, stream bool) (int, string, []byte) {
	t.Helper()
	body := `{"model":"pool","stream":` + map[bool]string{true: "true", false: "false"}[stream] +
		`,"messages":[{"role":"user","content":"Hello there, gateway."}]}`
	req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+shadowKey)
	req.Header.Set("X-Request-Id", id)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header.Get("X-Request-Id"), created.ReplaceAll(b, []byte(`"created":0`))
}

var created = regexp.MustCompile(`"created":[0-9]+`)

// logRecord is what the shadow tests read of a record of the request log.
type logRecord struct {
	ID         string  `json:"id"`
	RequestID  string  `json:"request_id"`
	KeyID      string  `json:"key_id"`
	Wire       string  `json:"wire"`
	Target     string  `json:"target"`
	Kind       string  `json:"kind"`
	Error      string  `json:"error"`
	CostUSD    float64 `json:"cost_usd"`
	TokensOut  int     `json:"tokens_out"`
	DurationMS float64 `json:"duration_ms"`
	Shadow     bool    `json:"shadow"`
	Similarity float64 `json:"similarity"`
}

// records lists the request log's records of request id once there are want of them (the
// log is written off the request path), failing the test when they do not come.
func records(t *testing.T, url, id string, want int) []logRecord {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		req, _ := http.NewRequest("GET", url+"/admin/logs?request_id="+id, nil)
		req.Header.Set("Authorization", "Bearer "+adminToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var page struct{ Data []logRecord }
		err = json.NewDecoder(res.Body).Decode(&page)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) >= want || time.Now().After(deadline) {
			if len(page.Data) != want {
				t.Fatalf("request %s: got %d records %+v, want %d", id, len(page.Data), page.Data, want)
			}
			return page.Data
		}
	}
}

// split returns the client's record and the shadow's of one request.
func split(t *testing.T, rs []logRecord) (real, shadow logRecord) {
	t.Helper()
	for _, r := range rs {
		if r.Shadow {
			shadow = r
		} else {
			real = r
		}
	}
	if real.ID == "" || shadow.ID == "" || real.ID == shadow.ID {
		t.Fatalf("got records %+v, want one of the client's and one shadow", rs)
	}
	return real, shadow
}

// At 100%, the client's answers, streamed or not, are byte for byte those of the same
// gateway without a shadow; each request has a second record, shadow: true, from b/m, with
// its cost (b/m's price, far over the key's budget) and its similarity to the answer (the same recorded answer: 1), and
// no key; the key's budget, which one shadow call would exceed, never refuses it.
func TestShadowTraffic(t *testing.T) {
	plain := shadowGateway(t, "", newSlowable(t), newSlowable(t))
	a, b := newSlowable(t), newSlowable(t)
	mirrored := shadowGateway(t, ", shadow: {target: b/m, percent: 100}", a, b)
	for i, stream := range []bool{true, false, true, false, true} {
		rid := fmt.Sprintf("shadow-traffic-%d", i)
		st0, _, want := ask(t, plain, rid, stream)
		st1, id, got := ask(t, mirrored, rid, stream)
		if st0 != 200 || st1 != 200 || string(got) != string(want) {
			t.Fatalf("request %d (stream %v): got %d %s, want %d %s", i, stream, st1, got, st0, want)
		}
		real, shadow := split(t, records(t, mirrored, id, 2))
		if real.Target != "a/m" || real.KeyID == "" || real.Wire != "chat" {
			t.Errorf("the client's record: got %+v, want a/m with its key, wire chat", real)
		}
		if shadow.Target != "b/m" || shadow.Kind != "" || shadow.Similarity != 1 || shadow.KeyID != "" || shadow.Wire != "shadow" ||
			shadow.TokensOut == 0 || shadow.CostUSD <= 0.01 || shadow.CostUSD < 900*real.CostUSD {
			t.Errorf("the shadow's record: got %+v, want b/m served, similarity 1, no key, wire shadow, cost 1000x the client's (%v) and over the budget",
				shadow, real.CostUSD)
		}
	}
	if n := a.calls.Load(); n != 5 {
		t.Errorf("a/m was called %d times, want 5", n)
	}
	if n := b.calls.Load(); n != 5 {
		t.Errorf("b/m (the shadow) was called %d times, want 5", n)
	}
}

// A shadow target that fails, or holds its answer, changes nothing for the client: its
// answer is whole and 200 while the shadow call is still held (it waits for none), and a
// failed shadow is only a record with its error.
func TestShadowFailingOrHeld(t *testing.T) {
	a, b := newSlowable(t), newSlowable(t)
	var failing atomic.Bool
	b.fail = func(int64) bool { return failing.Load() }
	url := shadowGateway(t, ", shadow: {target: b/m, percent: 100}", a, b)
	plain := shadowGateway(t, "", newSlowable(t), newSlowable(t))

	_, _, want := ask(t, plain, "shadow-failing", true)
	failing.Store(true)
	st, id, got := ask(t, url, "shadow-failing", true)
	if st != 200 || string(got) != string(want) {
		t.Fatalf("with a failing shadow: got %d %s, want 200 %s", st, got, want)
	}
	_, shadow := split(t, records(t, url, id, 2))
	if shadow.Kind == "" || shadow.Error == "" || shadow.Similarity != 0 || shadow.Target != "b/m" {
		t.Errorf("the failed shadow's record: got %+v, want its error kind and text, no similarity", shadow)
	}

	_, _, want = ask(t, plain, "shadow-held", true)
	failing.Store(false)
	b.hold.Store(true)
	st, id, got = ask(t, url, "shadow-held", true)
	if st != 200 || string(got) != string(want) {
		t.Fatalf("with a held shadow: got %d %s, want 200 %s", st, got, want)
	}
	for deadline := time.Now().Add(10 * time.Second); b.held.Load() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the shadow call never reached b/m")
		}
	}
	// The shadow call of the first request is held: the next request is served whole all the same.
	st, _, got = ask(t, url, "shadow-next", false)
	if st != 200 || len(got) == 0 || b.held.Load() == 0 {
		t.Fatalf("while a shadow is held: got %d %s (held %d), want 200 with an answer", st, got, b.held.Load())
	}
	records(t, url, id, 1) // only the client's record while its shadow is held
	close(b.release)
	_, shadow = split(t, records(t, url, id, 2))
	if shadow.Kind != "" || shadow.Similarity != 1 {
		t.Errorf("the released shadow's record: got %+v, want served, similarity 1", shadow)
	}
}

// BenchmarkShadow is the client's median latency (p50-ms) of a streamed request through the
// gateway, without a shadow and with one at 100% (issue 49), to a local upstream that
// answers at once (the worst case: the gateway's own CPU is all of the client's wait, and
// the shadow calls double it) and to one that answers after 20 ms (both upstreams; a
// provider's first token takes longer). The shadow calls run beside the measured requests,
// so what they cost the client is the CPU they share. docs/fallbacks.md, "Shadow traffic",
// has the figures.
func BenchmarkShadow(b *testing.B) {
	for _, bc := range []struct {
		name, shadow string
		delay        time.Duration
	}{
		{"off", "", 0},
		{"on-100", ", shadow: {target: b/m, percent: 100}", 0},
		{"off-20ms", "", 20 * time.Millisecond},
		{"on-100-20ms", ", shadow: {target: b/m, percent: 100}", 20 * time.Millisecond},
	} {
		b.Run(bc.name, func(b *testing.B) {
			up, shadow := newSlowable(b), newSlowable(b)
			up.slow(bc.delay)
			shadow.slow(bc.delay)
			url := shadowGateway(b, bc.shadow, up, shadow)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				if st, _, _ := ask(b, url, fmt.Sprintf("bench-%d", i), true); st != 200 {
					b.Fatalf("status %d", st)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		})
	}
}
