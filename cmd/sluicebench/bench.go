package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

var allScenarios = []string{"nonstream", "stream", "saturation", "memory", "redis-hung"}

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
	inproc     bool    // servers in this process (the test); memory needs child processes
	rateScale  float64 // multiplies the open-loop rates (0: 1)
}

// bench is one run: the servers and the load.
type bench struct {
	o     options
	c     *cluster
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
	if o.rateScale == 0 {
		o.rateScale = 1
	}
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
	c, err := start(ctx, o.inproc, dir, o.cpuprofile)
	if err != nil {
		return nil, err
	}
	b := &bench{o: o, c: c, dir: dir, load: newLoader(), admin: &http.Client{
		Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}}
	rep := newReport(o)
	if !o.inproc {
		rep.notes = append(rep.notes, "Server logs: "+dir)
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
		case "saturation":
			err = b.saturation(ctx, rep)
		case "memory":
			err = b.memory(ctx, rep)
		case "redis-hung":
			err = b.redisHung(ctx, rep)
		}
		if err != nil {
			return fmt.Errorf("scenario %s: %w", s, err)
		}
	}
	return nil
}

// compare runs one load against the proxy and the gateway: a short warm-up of each, then the
// measured time in halves, proxy, gateway, gateway, proxy, so that a drift of the machine
// (it may be shared) weighs on both alike.
func (b *bench) compare(ctx context.Context, name string, rep *report,
	load func(ctx context.Context, p *proc, viaGateway bool, d time.Duration) result) (proxy, gw result, err error) {
	warm := min(b.o.duration/5, time.Second)
	load(ctx, b.c.proxy, false, warm)
	load(ctx, b.c.gateway, true, warm)
	half := b.o.duration / 2
	proxy.merge(load(ctx, b.c.proxy, false, half))
	gw.merge(load(ctx, b.c.gateway, true, half))
	gw.merge(load(ctx, b.c.gateway, true, half))
	proxy.merge(load(ctx, b.c.proxy, false, half))
	if err := ctx.Err(); err != nil {
		return proxy, gw, err
	}
	for _, t := range []struct {
		name string
		r    *result
	}{{"proxy", &proxy}, {"gateway", &gw}} {
		if len(t.r.samples) == 0 {
			return proxy, gw, fmt.Errorf("%s: every request failed (%d): %v", t.name, t.r.errs, t.r.firstErr)
		}
	}
	rep.runs(name, proxy, gw)
	return proxy, gw, nil
}

func (b *bench) nonstream(ctx context.Context, rep *report) error {
	for _, rate := range []float64{500, 1000} {
		rate *= b.o.rateScale
		name := fmt.Sprintf("non-streamed %g/s", rate)
		p, g, err := b.compare(ctx, name, rep, func(ctx context.Context, pr *proc, gw bool, d time.Duration) result {
			return b.load.openLoop(ctx, chatCall(pr, script, false, gw), rate, d)
		})
		if err != nil {
			return err
		}
		rep.ratio(name, "p50", p.quantile(0.5, false), g.quantile(0.5, false), 1.3)
		rep.ratio(name, "p99", p.quantile(0.99, false), g.quantile(0.99, false), 1.5)
	}
	return nil
}

func (b *bench) stream(ctx context.Context, rep *report) error {
	rate := 300 * b.o.rateScale
	name := fmt.Sprintf("streamed %g/s", rate)
	p, g, err := b.compare(ctx, name, rep, func(ctx context.Context, pr *proc, gw bool, d time.Duration) result {
		return b.load.openLoop(ctx, chatCall(pr, script, true, gw), rate, d)
	})
	if err != nil {
		return err
	}
	rep.ratio(name, "first content p50", p.quantile(0.5, true), g.quantile(0.5, true), 1.3)
	rep.ratio(name, "total p50", p.quantile(0.5, false), g.quantile(0.5, false), 1.5)
	rep.ratio(name, "first content p99", p.quantile(0.99, true), g.quantile(0.99, true), 0)
	rep.ratio(name, "total p99", p.quantile(0.99, false), g.quantile(0.99, false), 0)
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
		var use [2]cpuUse // proxy, gateway: where the machine's CPU went, per request
		p, g, err := b.compare(ctx, name, rep, func(ctx context.Context, pr *proc, gw bool, d time.Duration) result {
			s0, m0 := cpuTime(pr.pid), cpuTime(b.c.mock.pid)
			r := b.load.closedLoop(ctx, chatCall(pr, v.script, v.stream, gw), satConns, d)
			u := &use[0]
			if gw {
				u = &use[1]
			}
			u.server += cpuTime(pr.pid) - s0
			u.mock += cpuTime(b.c.mock.pid) - m0
			u.n += r.n
			return r
		})
		if err != nil {
			return err
		}
		rep.throughput(name, p.throughput(), g.throughput(), v.limit)
		if b.o.inproc || use[0].n == 0 || use[1].n == 0 {
			continue
		}
		rep.notes = append(rep.notes, fmt.Sprintf("%s, CPU per request (user+system, from /proc): "+
			"proxy %s and the mock behind it %s; gateway %s and the mock behind it %s. %s", name,
			use[0].per(use[0].server), use[0].per(use[0].mock), use[1].per(use[1].server), use[1].per(use[1].mock), v.why))
	}
	return nil
}

// cpuUse sums the CPU time of a server and of the mock over n requests.
type cpuUse struct {
	server, mock time.Duration
	n            int
}

func (u cpuUse) per(d time.Duration) string {
	return fmt.Sprintf("%.0f µs", float64(d.Microseconds())/float64(u.n))
}

// memStat is what the memory scenario measured of one server.
type memStat struct {
	baseRSS, openRSS     int64 // KiB
	baseG, openG, afterG int
	res                  result
}

func (m memStat) perStream(n int) float64 { return float64(m.openRSS-m.baseRSS) / float64(n) }

// memory holds o.streams streams open at once on each server, the mock sending one chunk a
// second, and measures the RSS they add and whether the goroutines return to baseline.
func (b *bench) memory(ctx context.Context, rep *report) error {
	if b.c.gateway.pid == 0 {
		return errors.New("needs the servers in child processes")
	}
	n := b.o.streams
	// Long enough that every stream is still open when the last one has its headers.
	chunks := int(math.Ceil(float64(n)/openRate)) + 3
	mscript := fmt.Sprintf("text?len=%d&chunk=10&delay=1s", 10*chunks)
	var stats [2]memStat
	for i, t := range []struct {
		p  *proc
		gw bool
	}{{b.c.proxy, false}, {b.c.gateway, true}} {
		st, err := b.hold(ctx, t.p, chatCall(t.p, mscript, true, t.gw), n)
		if err != nil {
			return fmt.Errorf("%s: %w", t.p.name, err)
		}
		stats[i] = st
	}
	name := fmt.Sprintf("memory, %d open streams", n)
	p, g := stats[0], stats[1]
	rep.runs(name, p.res, g.res)
	rep.rows = append(rep.rows, row{scenario: name, metric: "RSS added per stream",
		proxy: fmt.Sprintf("%.1f KiB", p.perStream(n)), gateway: fmt.Sprintf("%.1f KiB", g.perStream(n)),
		pv: p.perStream(n), gv: g.perStream(n), ratio: ratioString(p.perStream(n), g.perStream(n)),
		target: "gateway <= 100 KiB", holds: yesNo(g.perStream(n) <= 100)})
	gor := func(m memStat) string { return fmt.Sprintf("%d → %d → %d", m.baseG, m.openG, m.afterG) }
	rep.rows = append(rep.rows, row{scenario: name, metric: "goroutines: before → open → after",
		proxy: gor(p), gateway: gor(g), pv: float64(p.openG), gv: float64(g.openG), ratio: "",
		target: "back to baseline", holds: yesNo(g.afterG <= g.baseG)})
	rep.notes = append(rep.notes, fmt.Sprintf("Memory: `%s`, opened at %d/s; RSS is VmRSS of the server process after debug.FreeOSMemory, before and once every stream has its headers.", mscript, openRate))
	return nil
}

// hold measures one server under n open streams of c.
func (b *bench) hold(ctx context.Context, p *proc, c call, n int) (memStat, error) {
	var st memStat
	var err error
	settle := func() error {
		// Idle keep-alive connections are a pool, not streams that did not end: close the
		// load's and the server's upstream ones (the mock closes its idle connections).
		b.load.close()
		if err := b.post(b.c.mock.admin + "/closeidle"); err != nil {
			return err
		}
		time.Sleep(500 * time.Millisecond)
		return nil
	}
	if err := settle(); err != nil {
		return st, err
	}
	if err := b.post(p.admin + "/freeos"); err != nil {
		return st, err
	}
	// The connections closed above end their goroutines asynchronously: wait for the count
	// to settle.
	for i := 0; i < 25; i++ {
		g, err := b.goroutines(p)
		if err != nil {
			return st, err
		}
		if i > 0 && g >= st.baseG {
			break
		}
		st.baseG = g
		time.Sleep(200 * time.Millisecond)
	}
	if st.baseRSS, err = rssKiB(p.pid); err != nil {
		return st, err
	}
	var merr error
	st.res = b.load.hold(ctx, c, n, openRate, func() {
		time.Sleep(500 * time.Millisecond)
		if st.openRSS, merr = rssKiB(p.pid); merr != nil {
			return
		}
		st.openG, merr = b.goroutines(p)
	})
	if merr != nil {
		return st, merr
	}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	if len(st.res.samples) == 0 {
		return st, fmt.Errorf("every stream failed (%d): %v", st.res.errs, st.res.firstErr)
	}
	if err := settle(); err != nil {
		return st, err
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if st.afterG, err = b.goroutines(p); err != nil || st.afterG <= st.baseG || time.Now().After(deadline) {
			return st, err
		}
	}
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

func (b *bench) goroutines(p *proc) (int, error) {
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
