package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"strings"
	"time"
)

// memStat is what the memory scenario measured of one server.
type memStat struct {
	baseRSS, openRSS     int64 // KiB
	baseG, openG, afterG int
	base, open           memSplit // zero for a server without the harness's admin (Bifrost)
	res                  result
}

// memSplit is what a server's runtime says it holds: goroutine stacks and live heap objects.
type memSplit struct{ stack, heap int64 } // bytes

func (m memStat) perStream(n int) float64 { return float64(m.openRSS-m.baseRSS) / float64(n) }

// memory holds o.streams streams open at once on each server, the mock sending one chunk a
// second, and measures the RSS they add, whether the goroutines return to baseline, and the
// first content's latency and the errors under that load; in o.rounds rounds, the servers'
// order rotating.
func (b *bench) memory(ctx context.Context, rep *report) error {
	if b.c.gateway.pid == 0 {
		return errors.New("needs the servers in child processes")
	}
	n := b.o.streams
	// Long enough that every stream is still open when the last one has its headers.
	chunks := int(math.Ceil(float64(n)/openRate)) + 3
	mscript := fmt.Sprintf("text?len=%d&chunk=10&delay=1s", 10*chunks)
	rounds := make([]map[*proc]memStat, b.o.rounds)
	ts := make([]trio, b.o.rounds)
	for i := range rounds {
		rounds[i] = map[*proc]memStat{}
		for _, p := range rotation(b.c.targets(), i) {
			st, err := b.hold(ctx, p, chatCall(p, mscript, true), n)
			if err != nil {
				return fmt.Errorf("%s, round %d: %w", p.name, i+1, err)
			}
			rounds[i][p] = st
		}
		ts[i] = trio{proxy: rounds[i][b.c.proxy].res, gw: rounds[i][b.c.gateway].res, peered: b.c.peer != nil}
		if ts[i].peered {
			ts[i].peer = rounds[i][b.c.peer].res
		}
	}
	name := fmt.Sprintf("memory, %d open streams", n)
	rep.runs(name, ts...)
	each := func(v func(memStat) float64) figure {
		var f figure
		for _, st := range rounds {
			f.p, f.g = append(f.p, v(st[b.c.proxy])), append(f.g, v(st[b.c.gateway]))
			f.b = append(f.b, v(st[b.c.peer])) // the zero memStat without a peer
		}
		return f
	}
	peered := ts[0].peered
	rep.add(name, "RSS added per stream", kibUnit, each(func(m memStat) float64 { return m.perStream(n) }), peered, limits{proxy: 1.2})
	gor := func(p *proc) string {
		var s []string
		for _, st := range rounds {
			m := st[p]
			s = append(s, fmt.Sprintf("%d → %d → %d", m.baseG, m.openG, m.afterG))
		}
		return strings.Join(s, "; ")
	}
	back := 0
	for _, st := range rounds {
		if g := st[b.c.gateway]; g.afterG <= g.baseG {
			back++
		}
	}
	open := each(func(m memStat) float64 { return float64(m.openG) })
	rw := row{scenario: name, metric: "goroutines: before → open → after, each round",
		proxy: gor(b.c.proxy), gateway: gor(b.c.gateway), pv: median(open.p), gv: median(open.g),
		target: "back to baseline", holds: verdict(back, len(rounds))}
	if peered {
		rw.peer, rw.bv = gor(b.c.peer), median(open.b)
	}
	rep.rows = append(rep.rows, rw)
	rep.latency(ts, name, "first content p50", 0.5, true, limits{})
	rep.latency(ts, name, "first content p99", 0.99, true, limits{proxy: 1.5})
	errs := each(func(m memStat) float64 { return float64(m.res.errs) })
	erw := row{scenario: name, metric: "errors", proxy: fmt.Sprint(sum(errs.p)), gateway: fmt.Sprint(sum(errs.g)),
		target: "0", holds: yesNo(sum(errs.g) == 0)}
	if peered {
		erw.peer = fmt.Sprint(sum(errs.b))
	}
	rep.rows = append(rep.rows, erw)
	split := func(p *proc) string {
		f := each(func(m memStat) float64 { return float64(m.open.stack-m.base.stack) / 1024 / float64(n) })
		h := each(func(m memStat) float64 { return float64(m.open.heap-m.base.heap) / 1024 / float64(n) })
		if p == b.c.proxy {
			return "stacks " + kibUnit.cell(f.p) + ", live heap " + kibUnit.cell(h.p)
		}
		return "stacks " + kibUnit.cell(f.g) + ", live heap " + kibUnit.cell(h.g)
	}
	rep.notes = append(rep.notes, fmt.Sprintf("Memory per stream as the runtime counts it: proxy %s; gateway %s.", split(b.c.proxy), split(b.c.gateway)))
	rep.notes = append(rep.notes, fmt.Sprintf("Memory: `%s`, opened at %d/s; RSS is VmRSS of the server process after debug.FreeOSMemory, before and once every stream has its headers; first content is measured from each stream's scheduled opening.", mscript, openRate))
	return nil
}

// sum is the total of vs.
func sum(vs []float64) float64 {
	var t float64
	for _, v := range vs {
		t += v
	}
	return t
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
	if p.admin != "" { // Bifrost has none: its RSS is taken as it stands
		if err := b.post(p.admin + "/freeos"); err != nil {
			return st, err
		}
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
	if st.base, err = b.memSplit(p); err != nil {
		return st, err
	}
	var merr error
	st.res = b.load.hold(ctx, c, n, openRate, func() {
		time.Sleep(500 * time.Millisecond)
		if st.openRSS, merr = rssKiB(p.pid); merr != nil {
			return
		}
		if st.openG, merr = b.goroutines(p); merr != nil {
			return
		}
		if st.open, merr = b.memSplit(p); merr != nil || b.o.heldprof == "" || p != b.c.gateway {
			return
		}
		// After a collection, the profile's in-use figures are what the open streams hold.
		var abs string
		if abs, merr = filepath.Abs(b.o.heldprof); merr == nil {
			if merr = b.post(p.admin + "/freeos"); merr == nil {
				merr = b.post(p.admin + "/memprofile?path=" + url.QueryEscape(abs))
			}
			if merr == nil { // and the goroutines' stacks, beside it
				merr = b.post(p.admin + "/memprofile?kind=goroutine&path=" + url.QueryEscape(abs+".goroutines"))
			}
		}
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
