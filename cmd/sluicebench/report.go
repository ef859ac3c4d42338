package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// report is the markdown table of a run and its notes.
type report struct {
	header []string
	peer   string // the peer's name in the columns ("Bifrost"), empty without a peer
	rows   []row
	notes  []string
	failed bool // a request failed
	// plain and streamed name the scenarios of the side-by-side table (empty: not run).
	plain, streamed string
}

// row is one measured figure of the servers. pv, bv and gv are the raw values (ms, µs,
// req/s, KiB) of the proxy, the peer and the gateway; bv and peer are empty without a peer.
type row struct {
	scenario, metric     string
	proxy, peer, gateway string
	pv, bv, gv           float64
	ratio, peerRatio     string // gateway / proxy, gateway / peer
	target               string // empty: for information
	holds                string
}

// limits are a row's targets: the gateway's value at most (or, for a throughput, at least)
// proxy times the proxy's and peer times the peer's; 0 is no target.
type limits struct{ proxy, peer float64 }

// unit formats a raw value; atLeast marks a figure where more is better (a throughput).
type unit struct {
	format  string
	atLeast bool
}

var (
	msUnit  = unit{format: "%.2f ms"}
	cpuUnit = unit{format: "%.0f µs"}
	rpsUnit = unit{format: "%.0f req/s", atLeast: true}
	kibUnit = unit{format: "%.1f KiB"}
)

// add adds a row of the three values (b, the peer's, only if peered) against lim.
func (r *report) add(scenario, metric string, u unit, p, b, g float64, peered bool, lim limits) {
	rw := row{scenario: scenario, metric: metric, proxy: fmt.Sprintf(u.format, p), gateway: fmt.Sprintf(u.format, g),
		pv: p, gv: g, ratio: ratioString(p, g)}
	if peered {
		rw.peer, rw.bv, rw.peerRatio = fmt.Sprintf(u.format, b), b, ratioString(b, g)
	}
	op := "<="
	if u.atLeast {
		op = ">="
	}
	var targets []string
	ok := true
	check := func(limit, ref float64, name string) {
		if limit <= 0 {
			return
		}
		targets = append(targets, fmt.Sprintf("%s %gx %s", op, limit, name))
		ok = ok && ref > 0 && (u.atLeast && g >= limit*ref || !u.atLeast && g <= limit*ref)
	}
	check(lim.proxy, p, "proxy")
	if peered {
		check(lim.peer, b, r.peer)
	}
	if len(targets) > 0 {
		rw.target, rw.holds = strings.Join(targets, ", "), yesNo(ok)
	}
	r.rows = append(r.rows, rw)
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
		fmt.Sprintf("Each load runs %s per server (after a warm-up, in halves: proxy, [Bifrost,] gateway, gateway, [Bifrost,] proxy). "+
			"Mock answer: `%s` (20 text chunks), sent at once. Ratios are gateway / proxy (and / Bifrost); latencies are "+
			"measured from each request's scheduled time (open loop); CPU/request is the server process's own "+
			"user+system time (/proc/<pid>/stat) over its measured load divided by the requests it completed.", o.duration, script),
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
	r.add(scenario, metric, msUnit, ms(p), 0, ms(g), false, limits{proxy: limit})
}

// runs notes how many requests a scenario sent to each server and how many failed.
func (r *report) runs(scenario string, t trio) {
	line := scenario + ":"
	for i, x := range t.each() {
		sep := ";"
		if i == 0 {
			sep = ""
		}
		line += fmt.Sprintf("%s %s %d requests, %d failed", sep, x.name, x.r.n, x.r.errs)
	}
	line += "."
	for _, x := range t.each() {
		if x.r.firstErr != nil {
			r.failed = true
			line += fmt.Sprintf(" First %s error: %v.", x.name, x.r.firstErr)
		}
	}
	r.notes = append(r.notes, line)
}

func ratioString(p, g float64) string {
	if p <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", g/p)
}

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
