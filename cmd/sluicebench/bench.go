package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

var allScenarios = []string{"nonstream", "stream", "long", "saturation", "ceiling", "memory", "redis-hung", "redis-cluster"}

const (
	// script is every scenario's answer but memory's: 200 bytes in 20 text chunks, at once.
	script = "text?len=200&chunk=10"
	// openRate is how fast the memory scenario opens its streams, per second.
	openRate = 1000
	// satConns is the closed loop's concurrency.
	satConns = 64
)

// options configure a run.
type options struct {
	duration   time.Duration // measured per scenario and target
	scenarios  []string
	streams    int
	quick      bool
	cpuprofile string
	memprofile string  // the gateway's allocation profile, written after the scenarios
	heldprof   string  // the gateway's heap profile while the memory scenario's streams are open
	inproc     bool    // servers in this process (the test); memory needs child processes
	rateScale  float64 // multiplies the open-loop rates (0: 1)
	ceilingN   int     // requests per rate of the ceiling scenario (0: ceilingN)
	peer       peerEnv // the optional peer: Bifrost, the gateway with its log off, or none
	rounds     int     // alternating rounds of each load, the servers' order rotating (0: 1)
	pin        bool    // each server under test on one core, the mock and the load on the others
}

// bench is one run: the servers and the load.
type bench struct {
	o     options
	c     *cluster
	pin   pinning
	dir   string // the servers' logs
	load  *loader
	admin *http.Client
}

// run starts the servers, runs the scenarios and writes the report to w.
func run(ctx context.Context, o options, w io.Writer) error {
	rep, err := measure(ctx, o)
	if err != nil {
		return err
	}
	rep.write(w)
	return nil
}

// measure runs the scenarios of o and returns their report.
func measure(ctx context.Context, o options) (*report, error) {
	for _, s := range o.scenarios {
		if !slices.Contains(allScenarios, s) {
			return nil, fmt.Errorf("unknown scenario %q (want %s)", s, strings.Join(allScenarios, ", "))
		}
	}
	if o.duration <= 0 {
		return nil, errors.New("-duration must be positive")
	}
	// SLUICE_BENCH_UPSTREAM's alias sends every text script to the default script's target
	// (newGateway), so the memory scenario's streams, which wait a second a chunk, would end
	// at once in the gateway and be measured as held.
	if u := os.Getenv("SLUICE_BENCH_UPSTREAM"); u != "" && slices.Contains(o.scenarios, "memory") {
		return nil, fmt.Errorf("SLUICE_BENCH_UPSTREAM=%s answers every text script with %q: leave the memory scenario out", u, script)
	}
	if o.rateScale == 0 {
		o.rateScale = 1
	}
	o.rounds = max(o.rounds, 1)
	nofile, err := raiseNoFile()
	if err != nil {
		return nil, fmt.Errorf("raising RLIMIT_NOFILE: %w", err)
	}
	if slices.Contains(o.scenarios, "memory") && nofile < uint64(3*o.streams+256) {
		return nil, fmt.Errorf("RLIMIT_NOFILE %d is too low for %d streams", nofile, o.streams)
	}
	dir, err := os.MkdirTemp("", "sluicebench-")
	if err != nil {
		return nil, err
	}
	pn := pinning{why: "the servers run in this process"}
	if !o.inproc {
		pn = pin(o.pin)
	}
	c, err := start(ctx, o.inproc, dir, o.cpuprofile, o.peer, pn)
	if err != nil {
		return nil, err
	}
	b := &bench{o: o, c: c, pin: pn, dir: dir, load: newLoader(), admin: &http.Client{
		Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}}
	rep := newReport(o)
	if !o.inproc {
		rep.notes = append(rep.notes, "Server logs: "+dir) // first: dropped below unless a request failed
	}
	rep.notes = append(rep.notes, pn.note(c))
	switch {
	case o.peer.twin == "logoff":
		rep.peer, rep.twin = "log off", "with the log on over off"
		rep.notes = append(rep.notes, "Peer: the same gateway with its request log off (SLUICE_BENCH_PEER=logoff), "+
			"measured side by side with the gateway in the same rounds; its CPU target is issue 50's +5%.")
	case o.peer.twin == "same":
		rep.peer, rep.twin = "twin", "of the gateway over its twin"
		rep.notes = append(rep.notes, "Peer: a second gateway with the gateway's own settings (SLUICE_BENCH_PEER=same), "+
			"an A/A run: what the harness alone makes of two equal servers. Its CPU row keeps the log's +5% target, "+
			"to show how often the noise alone misses it.")
	case c.peer != nil:
		rep.peer = "Bifrost"
		logging := "request logging and stores off"
		if os.Getenv("SLUICE_BENCH_LOGS") != "" {
			logging = "request logging on, to its own SQLite logs store, without content; the config store off"
		}
		rep.notes = append(rep.notes, "Peer: "+o.peer.bin+" (config.json written by the bench: provider openai at the mock, "+logging+").")
	}
	if u := os.Getenv("SLUICE_BENCH_LOGS"); u != "" {
		kind := "a store" // the URL itself may hold a password
		if p, err := url.Parse(u); err == nil {
			kind = p.Scheme
		}
		rep.notes = append(rep.notes, "Gateway request log on ("+kind+", metadata only).")
	}
	err = b.scenarios(ctx, rep)
	b.load.close()
	if serr := c.stop(); err == nil && serr != nil {
		err = serr
	}
	if err != nil {
		return nil, err
	}
	if !o.inproc && !rep.failed {
		os.RemoveAll(dir) // the logs are kept only when something failed
		rep.notes = rep.notes[1:]
	}
	return rep, nil
}

// scenarios runs the selected scenarios in order, under a CPU profile of the gateway when
// -cpuprofile is given (select one scenario to profile one load).
func (b *bench) scenarios(ctx context.Context, rep *report) error {
	profile := b.o.cpuprofile != "" && !b.o.inproc
	if profile {
		if err := b.post(b.c.gateway.admin + "/cpuprofile/start"); err != nil {
			return err
		}
	}
	if err := b.each(ctx, rep); err != nil {
		return err
	}
	if profile {
		if err := b.post(b.c.gateway.admin + "/cpuprofile/stop"); err != nil {
			return err
		}
		rep.notes = append(rep.notes, "CPU profile of the gateway over "+strings.Join(b.o.scenarios, ", ")+": "+b.o.cpuprofile)
	}
	if b.o.memprofile != "" && !b.o.inproc {
		abs, err := filepath.Abs(b.o.memprofile)
		if err != nil {
			return err
		}
		if err := b.post(b.c.gateway.admin + "/memprofile?path=" + url.QueryEscape(abs)); err != nil {
			return err
		}
		rep.notes = append(rep.notes, "Allocation profile of the gateway (since its start): "+b.o.memprofile)
	}
	return nil
}

func (b *bench) each(ctx context.Context, rep *report) error {
	for _, s := range b.o.scenarios {
		var err error
		switch s {
		case "nonstream":
			err = b.nonstream(ctx, rep)
		case "stream":
			err = b.stream(ctx, rep)
		case "long":
			err = b.long(ctx, rep)
		case "saturation":
			err = b.saturation(ctx, rep)
		case "ceiling":
			err = b.ceiling(ctx, rep)
		case "memory":
			err = b.memory(ctx, rep)
		case "redis-hung":
			err = b.redisHung(ctx, rep)
		case "redis-cluster":
			err = b.redisCluster(ctx, rep)
		}
		if err != nil {
			return fmt.Errorf("scenario %s: %w", s, err)
		}
	}
	return nil
}

// trio is one load's results on the proxy, the peer (if any) and the gateway. Each result's
// cpu is the server process's own CPU time over its load (0 in process).
type trio struct {
	proxy, peer, gw result
	peered          bool
}

type named struct {
	name string
	r    *result
}

// each is the results by server, the peer's (if any) named peer.
func (t *trio) each(peer string) []named {
	if !t.peered {
		return []named{{"proxy", &t.proxy}, {"gateway", &t.gw}}
	}
	return []named{{"proxy", &t.proxy}, {peer, &t.peer}, {"gateway", &t.gw}}
}

// of is the result of server p.
func (t *trio) of(b *bench, p *proc) *result {
	switch p {
	case b.c.proxy:
		return &t.proxy
	case b.c.peer:
		return &t.peer
	}
	return &t.gw
}

// merged is the rounds ts of one load as one trio.
func merged(ts []trio) trio {
	var m trio
	for _, t := range ts {
		m.peered = t.peered
		m.proxy.merge(t.proxy)
		m.peer.merge(t.peer)
		m.gw.merge(t.gw)
	}
	return m
}

// rotation is s rotated left by r: round r's order of the servers (A B C, B C A, C A B, ...).
func rotation[T any](s []T, r int) []T {
	if len(s) == 0 {
		return nil
	}
	r %= len(s)
	return append(slices.Clone(s[r:]), s[:r]...)
}

// compare runs one load against the proxy, the peer and the gateway: a short warm-up of
// each, then o.rounds rounds of the measured time's share each, the servers' order rotating
// from round to round, so that a drift of the machine (it may be shared) weighs on all
// alike and each figure has a spread. The CPU time of each server process is taken around
// each of its rounds. It returns one trio per round.
func (b *bench) compare(ctx context.Context, name string, rep *report,
	load func(ctx context.Context, p *proc, d time.Duration) result) ([]trio, error) {
	targets := b.c.targets()
	warm := min(b.o.duration/5, time.Second)
	for _, p := range targets {
		load(ctx, p, warm)
	}
	ts := make([]trio, b.o.rounds)
	part := b.o.duration / time.Duration(len(ts))
	for i := range ts {
		ts[i].peered = b.c.peer != nil
		for _, p := range rotation(targets, i) {
			c0 := cpuTime(p.pid)
			r := load(ctx, p, part)
			r.cpu = cpuTime(p.pid) - c0
			ts[i].of(b, p).merge(r)
		}
	}
	if err := ctx.Err(); err != nil {
		return ts, err
	}
	for i := range ts {
		for _, x := range ts[i].each(rep.peer) {
			if len(x.r.samples) == 0 {
				return ts, fmt.Errorf("%s, round %d: every request failed (%d): %v", x.name, i+1, x.r.errs, x.r.firstErr)
			}
		}
	}
	rep.runs(name, ts...)
	return ts, nil
}

// over is the figure of v of each round of ts.
func over(ts []trio, v func(*result) float64) figure {
	var f figure
	for i := range ts {
		f.p = append(f.p, v(&ts[i].proxy))
		f.b = append(f.b, v(&ts[i].peer))
		f.g = append(f.g, v(&ts[i].gw))
	}
	return f
}

// latency adds the row of quantile q (of the first content if first) of the rounds ts.
func (rep *report) latency(ts []trio, scenario, metric string, q float64, first bool, lim limits) {
	rep.add(scenario, metric, msUnit, over(ts, func(r *result) float64 { return ms(r.quantile(q, first)) }),
		ts[0].peered, lim)
}

// cpu adds the CPU-per-request row of the rounds ts, unless the servers ran in process.
func (rep *report) cpu(ts []trio, scenario string, lim limits) {
	m := merged(ts)
	if m.proxy.cpu == 0 && m.gw.cpu == 0 {
		return
	}
	f := over(ts, (*result).cpuPer)
	rep.add(scenario, "CPU/request", cpuUnit, f, ts[0].peered, lim)
	if rep.twin != "" {
		rep.notes = append(rep.notes, fmt.Sprintf("%s, CPU per request %s: %s over all the rounds "+
			"(%.0f against %.0f µs); the rounds' ratios %s.", scenario, rep.twin, ratioString(m.peer.cpuPer(), m.gw.cpuPer()),
			m.gw.cpuPer(), m.peer.cpuPer(), meanInterval(f.b, f.g)))
	}
}

func (b *bench) nonstream(ctx context.Context, rep *report) error {
	for i, rate := range []float64{500, 1000} {
		rate *= b.o.rateScale
		name := fmt.Sprintf("non-streamed %g/s", rate)
		t, err := b.compare(ctx, name, rep, func(ctx context.Context, pr *proc, d time.Duration) result {
			return b.load.openLoop(ctx, chatCall(pr, script, false), rate, d)
		})
		if err != nil {
			return err
		}
		if i == 0 {
			rep.plain = name
		}
		// Issue 5's p50 and p99 against the proxy; issue 51's CPU against it, and all three
		// against Bifrost.
		rep.latency(t, name, "p50", 0.5, false, limits{proxy: 1.3, peer: 1})
		rep.latency(t, name, "p99", 0.99, false, limits{proxy: 1.5, peer: 1})
		rep.cpu(t, name, limits{proxy: 1.4, peer: 0.9})
	}
	return nil
}

func (b *bench) stream(ctx context.Context, rep *report) error {
	rate := 300 * b.o.rateScale
	name := fmt.Sprintf("streamed %g/s", rate)
	t, err := b.compare(ctx, name, rep, func(ctx context.Context, pr *proc, d time.Duration) result {
		return b.load.openLoop(ctx, chatCall(pr, script, true), rate, d)
	})
	if err != nil {
		return err
	}
	rep.streamed = name
	rep.latency(t, name, "first content p50", 0.5, true, limits{proxy: 1.3, peer: 0.8})
	rep.latency(t, name, "total p50", 0.5, false, limits{proxy: 1.5})
	rep.latency(t, name, "first content p99", 0.99, true, limits{proxy: 1.3})
	rep.latency(t, name, "total p99", 0.99, false, limits{})
	rep.cpu(t, name, limits{proxy: 1.6, peer: 0.6})
	return nil
}

// saturation runs the closed loop of target 3 (non-streamed), then two variants for
// information. Streamed, the mock streams to both servers: the gateway is compared with the
// proxy on the same upstream work, where the non-streamed loop also charges it for always
// streaming upstream. Non-streamed with flush=end, the mock sends the same stream in one
// write: what per-event delivery upstream costs.
func (b *bench) saturation(ctx context.Context, rep *report) error {
	for _, v := range []struct {
		name   string
		script string
		stream bool
		limit  float64
		why    string
	}{
		{"saturation", script, false, 0.7, "The mock streams to the gateway (upstream calls always stream) and answers the proxy in one body."},
		{"saturation streamed", script, true, 0, "The mock streams to both."},
		{"saturation, stream sent in one write", script + "&flush=end", false, 0,
			"The mock sends the gateway the same stream flushed once (flush=end), and the proxy its one body."},
	} {
		name := fmt.Sprintf("%s, %d connections", v.name, satConns)
		mock := map[*proc]time.Duration{} // the mock's CPU time behind each server
		t, err := b.compare(ctx, name, rep, func(ctx context.Context, pr *proc, d time.Duration) result {
			m0 := cpuTime(b.c.mock.pid)
			r := b.load.closedLoop(ctx, chatCall(pr, v.script, v.stream), satConns, d)
			mock[pr] += cpuTime(b.c.mock.pid) - m0
			return r
		})
		if err != nil {
			return err
		}
		rep.add(name, "throughput", rpsUnit, over(t, (*result).throughput), t[0].peered, limits{proxy: v.limit})
		rep.cpu(t, name, limits{})
		if b.o.inproc {
			continue
		}
		line := name + ", CPU per request of the mock (user+system, from /proc) behind"
		all := merged(t)
		for i, p := range b.c.targets() {
			r := all.of(b, p)
			sep := ","
			if i == 0 {
				sep = ""
			}
			line += fmt.Sprintf("%s %s %s", sep, p.name, perReq(mock[p], r.n))
		}
		rep.notes = append(rep.notes, line+". "+v.why)
	}
	return nil
}

func (b *bench) post(url string) error {
	resp, err := b.admin.Post(url, "", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s: %s", url, resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}

// memSplit asks a server with the harness's admin for its stacks and live heap; zero for a
// server without it (Bifrost).
func (b *bench) memSplit(p *proc) (memSplit, error) {
	var m memSplit
	if p.admin == "" {
		return m, nil
	}
	resp, err := b.admin.Get(p.admin + "/memstats")
	if err != nil {
		return m, err
	}
	defer resp.Body.Close()
	_, err = fmt.Fscan(resp.Body, &m.stack, &m.heap)
	return m, err
}

// goroutines is p's goroutine count; 0 for a server without the bench's admin port (Bifrost).
func (b *bench) goroutines(p *proc) (int, error) {
	if p.admin == "" {
		return 0, nil
	}
	resp, err := b.admin.Get(p.admin + "/goroutines")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(body)))
}
