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
	rows   []row
	notes  []string
	failed bool // a request failed
}

// row is one measured figure of both servers. pv and gv are the raw values (ms, req/s, KiB).
type row struct {
	scenario, metric string
	proxy, gateway   string
	pv, gv           float64
	ratio            string
	target           string // empty: for information
	holds            string
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
		fmt.Sprintf("Each load runs %s per server (after a warm-up, in halves: proxy, gateway, gateway, proxy). "+
			"Mock answer: `%s` (20 text chunks), sent at once. Ratios are gateway / proxy; latencies are "+
			"measured from each request's scheduled time (open loop).", o.duration, script),
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

// ratio adds a latency row; limit 0 means for information.
func (r *report) ratio(scenario, metric string, p, g time.Duration, limit float64) {
	rw := row{scenario: scenario, metric: metric, proxy: fmt.Sprintf("%.2f ms", ms(p)),
		gateway: fmt.Sprintf("%.2f ms", ms(g)), pv: ms(p), gv: ms(g), ratio: ratioString(ms(p), ms(g))}
	if limit > 0 {
		rw.target = fmt.Sprintf("<= %gx", limit)
		rw.holds = yesNo(p > 0 && float64(g) <= limit*float64(p))
	}
	r.rows = append(r.rows, rw)
}

// throughput adds a throughput row: the gateway must reach limit times the proxy; limit 0
// means for information.
func (r *report) throughput(scenario string, p, g, limit float64) {
	rw := row{scenario: scenario, metric: "throughput", proxy: fmt.Sprintf("%.0f req/s", p),
		gateway: fmt.Sprintf("%.0f req/s", g), pv: p, gv: g, ratio: ratioString(p, g)}
	if limit > 0 {
		rw.target, rw.holds = fmt.Sprintf(">= %gx", limit), yesNo(p > 0 && g >= limit*p)
	}
	r.rows = append(r.rows, rw)
}

// runs notes how many requests a scenario sent and how many failed.
func (r *report) runs(scenario string, p, g result) {
	line := fmt.Sprintf("%s: proxy %d requests, %d failed; gateway %d requests, %d failed.",
		scenario, p.n, p.errs, g.n, g.errs)
	for _, x := range []struct {
		name string
		r    result
	}{{"proxy", p}, {"gateway", g}} {
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
	fmt.Fprintln(w, "| scenario | metric | proxy | gateway | ratio | target | holds |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---|---|")
	for _, rw := range r.rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n",
			rw.scenario, rw.metric, rw.proxy, rw.gateway, rw.ratio, rw.target, rw.holds)
	}
	if len(r.notes) > 0 {
		fmt.Fprintln(w)
	}
	for _, n := range r.notes {
		fmt.Fprintln(w, "- "+n)
	}
}
