package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	// A command name with a space and a ')' of its own: the fields count from the last ')'.
	line := "4242 (sluice bench) x) S 1 4242 4242 0 -1 4194560 2301 0 0 0 731 129 0 0 20 0 9 0 1234 1000000 5000 18446744073709551615\n"
	got, err := parseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if want := (731 + 129) * 10 * time.Millisecond; got != want {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, bad := range []string{"", "4242 sluice S 1", "4242 (x) S 1 2 3", "4242 (x) S 1 4242 4242 0 -1 4194560 2301 0 0 0 abc 129"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q): got nil, want an error", bad)
		}
	}
}

func TestCPUPer(t *testing.T) {
	var r result
	if got := r.cpuPer(); got != 0 {
		t.Errorf("no requests: got %v, want 0", got)
	}
	r.merge(result{n: 1000, cpu: 300 * time.Millisecond})
	r.merge(result{n: 1000, cpu: 500 * time.Millisecond})
	if got, want := r.cpuPer(), 400.0; got != want {
		t.Errorf("got %v µs, want %v", got, want)
	}
}

// TestAddPeer checks the ratios and both targets of a row with a peer: it holds only when
// the gateway is within both.
func TestAddPeer(t *testing.T) {
	r := &report{peer: "Bifrost"}
	lim := limits{proxy: 1.6, peer: 0.8}
	r.add("plain", "CPU/request", cpuUnit, single(200, 400, 300), true, lim) // 1.5x proxy, 0.75x peer
	r.add("plain", "CPU/request", cpuUnit, single(200, 400, 330), true, lim) // 1.65x proxy
	r.add("plain", "CPU/request", cpuUnit, single(200, 350, 300), true, lim) // 0.857x peer
	r.add("plain", "CPU/request", cpuUnit, single(200, 0, 300), false, lim)  // no peer: the proxy's target only
	r.add("sat", "throughput", rpsUnit, single(1000, 900, 800), true, limits{proxy: 0.7})
	want := []struct{ ratio, peerRatio, target, holds string }{
		{"1.50x", "0.75x", "<= 1.6x proxy, <= 0.8x Bifrost", "yes"},
		{"1.65x", "0.82x", "<= 1.6x proxy, <= 0.8x Bifrost", "**no**"},
		{"1.50x", "0.86x", "<= 1.6x proxy, <= 0.8x Bifrost", "**no**"},
		{"1.50x", "", "<= 1.6x proxy", "yes"},
		{"0.80x", "0.89x", ">= 0.7x proxy", "yes"},
	}
	for i, w := range want {
		got := r.rows[i]
		if got.ratio != w.ratio || got.peerRatio != w.peerRatio || got.target != w.target || got.holds != w.holds {
			t.Errorf("row %d: got %q %q %q %q, want %q %q %q %q", i, got.ratio, got.peerRatio, got.target, got.holds,
				w.ratio, w.peerRatio, w.target, w.holds)
		}
	}
	if r.rows[0].peer != "400 µs" || r.rows[3].peer != "" {
		t.Errorf("got peer cells %q, %q, want \"400 µs\", \"\"", r.rows[0].peer, r.rows[3].peer)
	}
}

// TestSideBySide checks the table of issue 23: one line per server, the peer's between the
// proxy's and the gateway's, n/a where a figure was not measured.
func TestSideBySide(t *testing.T) {
	r := &report{peer: "Bifrost", plain: "non-streamed 500/s", streamed: "streamed 300/s"}
	tr := trio{peered: true}
	r.add(r.plain, "p50", msUnit, single(0.34, 0.55, 0.5), true, limits{})
	r.add(r.plain, "p99", msUnit, single(0.82, 0.94, 0.9), true, limits{})
	r.add(r.plain, "CPU/request", cpuUnit, single(219, 422, 300), true, limits{})
	r.add(r.streamed, "first content p50", msUnit, single(0.4, 0.71, 0.45), true, limits{})
	r.add(r.streamed, "first content p99", msUnit, single(0.93, 2.01, 1.1), true, limits{})
	r.cpu([]trio{tr}, r.streamed, limits{}) // not measured: no row
	var b strings.Builder
	r.write(&b)
	for _, line := range []string{
		"| bare `httputil.ReverseProxy` | 0.34 ms | 0.82 ms | 219 µs | 0.40 ms | 0.93 ms | n/a |",
		"| Bifrost | 0.55 ms | 0.94 ms | 422 µs | 0.71 ms | 2.01 ms | n/a |",
		"| **Sluice** | 0.50 ms | 0.90 ms | 300 µs | 0.45 ms | 1.10 ms | n/a |",
		"| scenario | metric | proxy | Bifrost | gateway | / proxy | / Bifrost | target | holds |",
	} {
		if !strings.Contains(b.String(), line+"\n") {
			t.Errorf("got report\n%s\nwant the line %s", b.String(), line)
		}
	}
	if i, j := strings.Index(b.String(), "| Bifrost |"), strings.Index(b.String(), "| **Sluice** |"); i > j {
		t.Errorf("got Bifrost's line after Sluice's:\n%s", b.String())
	}
}

// TestRotation checks the rounds' order of the servers: each round starts one server later,
// so that over as many rounds as servers each one runs first, in the middle and last.
func TestRotation(t *testing.T) {
	s := []string{"proxy", "bifrost", "gateway"}
	want := [][]string{
		{"proxy", "bifrost", "gateway"},
		{"bifrost", "gateway", "proxy"},
		{"gateway", "proxy", "bifrost"},
		{"proxy", "bifrost", "gateway"},
	}
	for r, w := range want {
		if got := rotation(s, r); !slices.Equal(got, w) {
			t.Errorf("round %d: got %v, want %v", r, got, w)
		}
	}
	if got := s; !slices.Equal(got, want[0]) {
		t.Errorf("rotation changed its argument: %v", got)
	}
	if got := rotation([]string{}, 2); len(got) != 0 {
		t.Errorf("no servers: got %v", got)
	}
}

// TestSpread checks a figure's cell over rounds: the median (the mean of the middle two for
// an even count), then the range; one round is the value alone.
func TestSpread(t *testing.T) {
	for _, c := range []struct {
		vs   []float64
		u    unit
		want string
	}{
		{[]float64{2.3, 1.98, 2.11}, msUnit, "2.11 ms (1.98–2.30)"},
		{[]float64{400, 300, 350, 500}, cpuUnit, "375 µs (300–500)"},
		{[]float64{2500}, rpsUnit, "2500 req/s"},
		{nil, kibUnit, "n/a"},
	} {
		if got := c.u.cell(c.vs); got != c.want {
			t.Errorf("cell(%v): got %q, want %q", c.vs, got, c.want)
		}
	}
	if got, want := ratios([]float64{1, 2, 4}, []float64{1.5, 2, 2}), "1.00x (0.50–1.50)"; got != want {
		t.Errorf("ratios: got %q, want %q", got, want)
	}
	if got := ratios([]float64{1, 0}, []float64{1, 1}); got != "n/a" {
		t.Errorf("ratios with a zero reference: got %q, want n/a", got)
	}
}

// TestHeldInEveryRound checks the verdict over rounds: a row whose median is within its
// targets but that failed them in one round does not hold, and says in how many it held;
// against the peer, each round compares that round's values.
func TestHeldInEveryRound(t *testing.T) {
	r := &report{peer: "Bifrost"}
	lim := limits{proxy: 1.5, peer: 1}
	// Medians: proxy 2, Bifrost 3, gateway 2.8: 1.4x the proxy and 0.93x Bifrost, within both.
	r.add("plain", "p50", msUnit, figure{p: []float64{2, 2, 2}, b: []float64{3, 3, 3}, g: []float64{2.8, 2.7, 3.2}}, true, lim)
	r.add("plain", "p50", msUnit, figure{p: []float64{2, 2, 2}, b: []float64{3, 3, 3}, g: []float64{2.8, 2.7, 2.9}}, true, lim)
	// Round 2's Bifrost was fast: 2.7 > 1.0x 2.5 there, though the medians hold.
	r.add("plain", "p50", msUnit, figure{p: []float64{2, 2, 2}, b: []float64{3, 2.5, 3}, g: []float64{2.8, 2.7, 2.9}}, true, lim)
	// A throughput: at least, in every round; none held.
	r.add("sat", "throughput", rpsUnit, figure{p: []float64{1000, 1000}, g: []float64{600, 650}}, false, limits{proxy: 0.7})
	for i, want := range []string{"**no** (held in 2 of 3 rounds)", "yes", "**no** (held in 2 of 3 rounds)", "**no** (held in 0 of 2 rounds)"} {
		if got := r.rows[i].holds; got != want {
			t.Errorf("row %d: got %q, want %q", i, got, want)
		}
	}
	if got, want := r.rows[0].gateway, "2.80 ms (2.70–3.20)"; got != want {
		t.Errorf("got gateway cell %q, want %q", got, want)
	}
	if got, want := r.rows[0].gv, 2.8; got != want {
		t.Errorf("got median %v, want %v", got, want)
	}
	if got, want := r.rows[2].peerRatio, "0.97x (0.93–1.08)"; got != want {
		t.Errorf("got peer ratio %q, want %q", got, want)
	}
	if got, want := verdict(1, 1), "yes"; got != want {
		t.Errorf("one round held: got %q", got)
	}
	if got, want := verdict(0, 1), "**no**"; got != want {
		t.Errorf("one round failed: got %q", got)
	}
}

// TestAddLogOff checks the rows against the gateway with its log off as the peer: CPU per
// request has issue 50's +5%, round by round, and the other rows no peer target.
func TestAddLogOff(t *testing.T) {
	r := &report{peer: "log off", twin: "with the log on over off"}
	lim := limits{proxy: 1.4, peer: 0.9} // 0.9: Bifrost's target, replaced
	r.add("plain", "CPU/request", cpuUnit, figure{p: []float64{200, 200}, b: []float64{250, 260}, g: []float64{260, 270}}, true, lim)
	r.add("plain", "CPU/request", cpuUnit, figure{p: []float64{200, 200}, b: []float64{250, 250}, g: []float64{260, 265}}, true, lim)
	r.add("plain", "p50", msUnit, single(1, 2, 1.3), true, limits{proxy: 1.3, peer: 1})
	want := []struct{ target, holds string }{
		{"<= 1.4x proxy, <= 1.05x log off", "yes"},                            // 1.04x, 1.038x
		{"<= 1.4x proxy, <= 1.05x log off", "**no** (held in 1 of 2 rounds)"}, // 1.04x, 1.06x
		{"<= 1.3x proxy", "yes"},
	}
	for i, w := range want {
		if got := r.rows[i]; got.target != w.target || got.holds != w.holds {
			t.Errorf("row %d: got %q %q, want %q %q", i, got.target, got.holds, w.target, w.holds)
		}
	}
}

func TestPeerFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	pe, err := peerFromEnv(env("SLUICE_BENCH_PEER", "logoff", "SLUICE_BENCH_LOGS", "sqlite:///tmp/x.db"))
	if err != nil || pe.twin != "logoff" || pe.bin != "" {
		t.Errorf("logoff: got %+v, %v; want the log-off peer", pe, err)
	}
	pe, err = peerFromEnv(env("BIFROST_BIN", "/bin/bifrost"))
	if err != nil || pe.twin != "" || pe.bin != "/bin/bifrost" {
		t.Errorf("Bifrost: got %+v, %v; want Bifrost", pe, err)
	}
	for _, bad := range [][]string{
		{"SLUICE_BENCH_PEER", "bifrost"},
		{"SLUICE_BENCH_PEER", "logoff"}, // without a log to turn off
		{"SLUICE_BENCH_PEER", "logoff", "SLUICE_BENCH_LOGS", "sqlite:///tmp/x.db", "BIFROST_BIN", "/bin/bifrost"},
		{"SLUICE_BENCH_PEER", "same", "SLUICE_BENCH_LOGS", "sqlite:///tmp/x.db"}, // one file, two writers
	} {
		if _, err := peerFromEnv(env(bad...)); err == nil {
			t.Errorf("%q: got nil, want an error", bad)
		}
	}
	if pe, err = peerFromEnv(env("SLUICE_BENCH_PEER", "same")); err != nil || pe.twin != "same" {
		t.Errorf("same: got %+v, %v; want the twin", pe, err)
	}
	env0 := []string{"A=1", "SLUICE_BENCH_LOGS=sqlite:///tmp/x.db", "SLUICE_BENCH_LOGSX=2"}
	if got, want := (peerEnv{twin: "logoff"}).twinEnv(env0), []string{"A=1", "SLUICE_BENCH_LOGSX=2"}; !slices.Equal(got, want) {
		t.Errorf("logoff's environment: got %q, want %q", got, want)
	}
	if got := (peerEnv{twin: "same"}).twinEnv(env0); got != nil {
		t.Errorf("same's environment: got %q, want nil (this process's)", got)
	}
}

func TestMeanInterval(t *testing.T) {
	// Ratios 1.0, 1.1, 1.2: mean 1.1, sd 0.1, 1.96 × 0.1 / √3 = 0.113.
	if got, want := meanInterval([]float64{100, 100, 100}, []float64{100, 110, 120}), "mean 1.100x ± 0.113 (95%, 3 rounds)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, c := range [][2][]float64{{{100}, {105}}, {{100, 0}, {105, 110}}, {{100}, {105, 110}}} {
		if got := meanInterval(c[0], c[1]); got != "n/a" {
			t.Errorf("meanInterval(%v, %v): got %q, want n/a", c[0], c[1], got)
		}
	}
}
