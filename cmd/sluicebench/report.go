package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// report is the markdown table of a run and its notes.
type report struct {
	header []string
	peer   string // the peer's name in the columns ("Bifrost"), empty without a peer
	twin   string // the peer is a second gateway, twin says what the CPU ratio is: only CPU has a target against it
	rows   []row
	notes  []string
	failed bool // a request failed
	// plain and streamed name the scenarios of the side-by-side table (empty: not run).
	plain, streamed string
}

// row is one measured figure of the servers. pv, bv and gv are the values (ms, µs, req/s,
// KiB) of the proxy, the peer and the gateway, the median over the rounds; bv and peer are
// empty without a peer. The cells show the median and, over more than one round, the range.
type row struct {
	scenario, metric     string
	proxy, peer, gateway string
	pv, bv, gv           float64
	ratio, peerRatio     string // gateway / proxy, gateway / peer
	target               string // empty: for information
	holds                string // "yes" only when the target held in every round
}

// figure is one measured quantity of the servers, a value per round each: p the proxy's, b
// the peer's (ignored without a peer), g the gateway's, all of the same length.
type figure struct{ p, b, g []float64 }

// single is the figure of one measurement.
func single(p, b, g float64) figure { return figure{[]float64{p}, []float64{b}, []float64{g}} }

// limits are a row's targets: the gateway's value at most (or, for a throughput, at least)
// proxy times the proxy's and peer times the peer's; 0 is no target.
type limits struct{ proxy, peer float64 }

// unit formats a value: num its number, suffix its unit; atLeast marks a figure where more
// is better (a throughput).
type unit struct {
	num, suffix string
	atLeast     bool
}

var (
	msUnit  = unit{num: "%.2f", suffix: " ms"}
	cpuUnit = unit{num: "%.0f", suffix: " µs"}
	rpsUnit = unit{num: "%.0f", suffix: " req/s", atLeast: true}
	kibUnit = unit{num: "%.1f", suffix: " KiB"}
)

// cell is vs as a table cell: the median with its unit, then the range over the rounds
// when there is more than one: "2.11 ms (1.98–2.30)".
func (u unit) cell(vs []float64) string { return spread(vs, u.num, u.suffix) }

// spread formats the median of vs with num and suffix, and "(min–max)" after it when vs
// has more than one value.
func spread(vs []float64, num, suffix string) string {
	if len(vs) == 0 {
		return "n/a"
	}
	s := fmt.Sprintf(num, median(vs)) + suffix
	if len(vs) > 1 {
		s += fmt.Sprintf(" ("+num+"–"+num+")", slices.Min(vs), slices.Max(vs))
	}
	return s
}

// median is the middle value of vs (the mean of the two middle ones for an even count); 0
// for none.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(vs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// roundRatios is g / ref round by round; false when a reference is missing or not positive.
func roundRatios(ref, g []float64) ([]float64, bool) {
	rs := make([]float64, 0, len(g))
	for i := range g {
		if i >= len(ref) || ref[i] <= 0 {
			return nil, false
		}
		rs = append(rs, g[i]/ref[i])
	}
	return rs, true
}

// ratios is g / ref round by round, as a spread; n/a when a reference is not positive.
func ratios(ref, g []float64) string {
	rs, ok := roundRatios(ref, g)
	if !ok {
		return "n/a"
	}
	return spread(rs, "%.2f", "x")
}

// meanInterval is the mean of the ratios g / ref round by round with its 95% interval (the
// normal approximation, 1.96 standard errors), or n/a with fewer than two rounds or a
// reference not positive.
func meanInterval(ref, g []float64) string {
	rs, ok := roundRatios(ref, g)
	if !ok || len(rs) < 2 {
		return "n/a"
	}
	var sum, sq float64
	for _, r := range rs {
		sum, sq = sum+r, sq+r*r
	}
	n := float64(len(rs))
	mean := sum / n
	sd := math.Sqrt(max(0, (sq-n*mean*mean)/(n-1)))
	return fmt.Sprintf("mean %.3fx ± %.3f (95%%, %d rounds)", mean, 1.96*sd/math.Sqrt(n), len(rs))
}

// add adds the row of figure f (its peer's values only if peered) against lim: it holds
// when the targets hold in every round.
func (r *report) add(scenario, metric string, u unit, f figure, peered bool, lim limits) {
	if r.twin != "" {
		lim.peer = twinLimit(metric)
	}
	rw := row{scenario: scenario, metric: metric, proxy: u.cell(f.p), gateway: u.cell(f.g),
		pv: median(f.p), gv: median(f.g), ratio: ratios(f.p, f.g)}
	if peered {
		rw.peer, rw.bv, rw.peerRatio = u.cell(f.b), median(f.b), ratios(f.b, f.g)
	}
	op := "<="
	if u.atLeast {
		op = ">="
	}
	var targets []string
	if lim.proxy > 0 {
		targets = append(targets, fmt.Sprintf("%s %gx proxy", op, lim.proxy))
	}
	if peered && lim.peer > 0 {
		targets = append(targets, fmt.Sprintf("%s %gx %s", op, lim.peer, r.peer))
	}
	if len(targets) == 0 {
		r.rows = append(r.rows, rw)
		return
	}
	within := func(limit, ref, g float64) bool {
		return limit <= 0 || ref > 0 && (u.atLeast && g >= limit*ref || !u.atLeast && g <= limit*ref)
	}
	held := 0
	for i, g := range f.g {
		ok := i < len(f.p) && within(lim.proxy, f.p[i], g)
		if peered && lim.peer > 0 {
			ok = ok && i < len(f.b) && within(lim.peer, f.b[i], g)
		}
		if ok {
			held++
		}
	}
	rw.target, rw.holds = strings.Join(targets, ", "), verdict(held, len(f.g))
	r.rows = append(r.rows, rw)
}

// logOffCPU is issue 50's target: the gateway's CPU per request with its request log on at
// most 5% over the same gateway's with the log off.
const logOffCPU = 1.05

// twinLimit is a row's target against a second gateway (the first with its log off): CPU
// per request has issue 50's; the other rows are for information.
func twinLimit(metric string) float64 {
	if metric == "CPU/request" {
		return logOffCPU
	}
	return 0
}

// verdict is a row's holds cell: "yes" when its target held in each of n rounds, "**no**"
// otherwise, with how many rounds it held in when there was more than one.
func verdict(held, n int) string {
	switch {
	case held == n && n > 0:
		return "yes"
	case n > 1:
		return fmt.Sprintf("**no** (held in %d of %d rounds)", held, n)
	}
	return "**no**"
}

func newReport(o options) *report {
	host, _ := os.Hostname()
	mode := "each server in its own process"
	if o.inproc {
		mode = "servers in the load generator's process"
	}
	return &report{header: []string{
		fmt.Sprintf("Run %s on %s: %s/%s, %d CPUs (%s), %s; %s.",
			time.Now().UTC().Format("2006-01-02 15:04 MST"), host, runtime.GOOS, runtime.GOARCH,
			runtime.NumCPU(), cpuModel(), runtime.Version(), mode),
		fmt.Sprintf("Each load runs %s per server (after a warm-up), in %d alternating rounds of %s each, the servers' order "+
			"rotating from round to round (proxy, [peer,] gateway; then [peer,] gateway, proxy; ...). Each cell is the "+
			"median over the rounds with their range in parentheses, each ratio the median of the rounds' ratios; a target "+
			"holds only when it holds in every round. "+
			"Mock answer: `%s` (20 text chunks), sent at once. Ratios are gateway / proxy (and / the peer); latencies are "+
			"measured from each request's scheduled time (open loop); CPU/request is the server process's own "+
			"user+system time (/proc/<pid>/stat) over its measured load divided by the requests it completed.",
			o.duration, o.rounds, (o.duration / time.Duration(max(o.rounds, 1))).Round(time.Millisecond), script),
	}}
}

// cpuModel is the first "model name" of /proc/cpuinfo, or "unknown CPU".
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ratio adds a latency row of the proxy and the gateway; limit 0 means for information.
func (r *report) ratio(scenario, metric string, p, g time.Duration, limit float64) {
	r.add(scenario, metric, msUnit, single(ms(p), 0, ms(g)), false, limits{proxy: limit})
}

// runs notes how many requests a scenario sent to each server and how many failed, over
// its rounds ts.
func (r *report) runs(scenario string, ts ...trio) {
	t := merged(ts)
	line := scenario + ":"
	for i, x := range t.each(r.peer) {
		sep := ";"
		if i == 0 {
			sep = ""
		}
		line += fmt.Sprintf("%s %s %d requests, %d failed", sep, x.name, x.r.n, x.r.errs)
	}
	line += "."
	for _, x := range t.each(r.peer) {
		if x.r.firstErr != nil {
			r.failed = true
			line += fmt.Sprintf(" First %s error: %v.", x.name, x.r.firstErr)
		}
	}
	r.notes = append(r.notes, line)
}

// ratioString is g / p, or n/a.
func ratioString(p, g float64) string {
	if p <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", g/p)
}

// yesNo is a holds cell of one verdict.
func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func (r *report) write(w io.Writer) {
	for _, h := range r.header {
		fmt.Fprintln(w, h)
		fmt.Fprintln(w)
	}
	r.side(w)
	if r.peer == "" {
		fmt.Fprintln(w, "| scenario | metric | proxy | gateway | ratio | target | holds |")
		fmt.Fprintln(w, "|---|---|---:|---:|---:|---|---|")
	} else {
		fmt.Fprintf(w, "| scenario | metric | proxy | %s | gateway | / proxy | / %s | target | holds |\n", r.peer, r.peer)
		fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---|---|")
	}
	for _, rw := range r.rows {
		if r.peer == "" {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n",
				rw.scenario, rw.metric, rw.proxy, rw.gateway, rw.ratio, rw.target, rw.holds)
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			rw.scenario, rw.metric, rw.proxy, rw.peer, rw.gateway, rw.ratio, rw.peerRatio, rw.target, rw.holds)
	}
	if len(r.notes) > 0 {
		fmt.Fprintln(w)
	}
	for _, n := range r.notes {
		fmt.Fprintln(w, "- "+n)
	}
}

// find is the row of scenario and metric, or nil.
func (r *report) find(scenario, metric string) *row {
	for i := range r.rows {
		if r.rows[i].scenario == scenario && r.rows[i].metric == metric {
			return &r.rows[i]
		}
	}
	return nil
}

// side writes the side-by-side table of issue 23, one line per server, when the plain and
// the streamed scenarios ran; a figure not measured (CPU in process) is "n/a".
func (r *report) side(w io.Writer) {
	if r.plain == "" || r.streamed == "" {
		return
	}
	cells := []*row{r.find(r.plain, "p50"), r.find(r.plain, "p99"), r.find(r.plain, "CPU/request"),
		r.find(r.streamed, "first content p50"), r.find(r.streamed, "first content p99"), r.find(r.streamed, "CPU/request")}
	fmt.Fprintf(w, "| | %s p50 | p99 | CPU/request | %s first content p50 | p99 | CPU/request |\n", r.plain, r.streamed)
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	line := func(name string, get func(*row) string) {
		fmt.Fprintf(w, "| %s |", name)
		for _, c := range cells {
			v := "n/a"
			if c != nil && get(c) != "" {
				v = get(c)
			}
			fmt.Fprintf(w, " %s |", v)
		}
		fmt.Fprintln(w)
	}
	line("bare `httputil.ReverseProxy`", func(c *row) string { return c.proxy })
	if r.peer != "" {
		line(r.peer, func(c *row) string { return c.peer })
	}
	line("**Sluice**", func(c *row) string { return c.gateway })
	fmt.Fprintln(w)
}
