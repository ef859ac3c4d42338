package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
)

// redisCluster measures the gateway with its shared state on one Redis node and on a Redis
// Cluster (3 masters, 3 replicas on loopback, redistest's), against the proxy: an open loop
// for the latency and CPU per request, a closed loop for the throughput. On the cluster a
// request's limit reservation, usage record and health go to the masters of their slots, and
// a usage record waits for one replica (WAIT 1). Skipped, with a note, without redis-server
// and redis-cli on PATH.
func (b *bench) redisCluster(ctx context.Context, rep *report) error {
	dir, err := os.MkdirTemp("", "sluicebench-cluster-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	one, err := startRedis(dir)
	if err != nil {
		rep.notes = append(rep.notes, "redis-cluster: skipped: "+err.Error())
		return nil
	}
	defer one.stop()
	c, err := redistest.NewCluster(filepath.Join(dir, "cluster"))
	if err != nil {
		rep.notes = append(rep.notes, "redis-cluster: skipped: "+err.Error())
		return nil
	}
	defer c.Close()
	gws := make([]*proc, 2)
	for i, url := range []string{"unix://" + one.socket, "cluster:" + strings.Join(c.Addrs, ",")} {
		if b.o.inproc {
			gws[i], err = inProcess(ctx, "gateway", b.c.mock.url, url)
		} else {
			gws[i], err = spawn("gateway", b.c.mock.url, url, b.dir, "", b.pin)
		}
		if err != nil {
			return err
		}
		defer gws[i].stop()
	}
	procs := []*proc{b.c.proxy, gws[0], gws[1]}
	rate := redisRate * b.o.rateScale // steady, as redis-hung's
	open := b.halves(ctx, procs, func(ctx context.Context, p *proc, d time.Duration) result {
		return b.load.openLoop(ctx, chatCall(p, script, false), rate, d)
	})
	closed := b.halves(ctx, procs, func(ctx context.Context, p *proc, d time.Duration) result {
		return b.load.closedLoop(ctx, chatCall(p, script, false), satConns, d)
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, form := range []string{"one Redis node", "Redis Cluster (3 masters, 3 replicas)"} {
		t := trio{proxy: open[0], gw: open[i+1]}
		name := fmt.Sprintf("non-streamed %g/s, %s", rate, form)
		if len(t.gw.samples) == 0 || len(t.proxy.samples) == 0 {
			return fmt.Errorf("%s: every request failed (%d): %v", name, t.gw.errs, t.gw.firstErr)
		}
		rep.runs(name, t)
		rep.latency([]trio{t}, name, "p50", 0.5, false, limits{})
		rep.latency([]trio{t}, name, "p99", 0.99, false, limits{})
		rep.cpu([]trio{t}, name, limits{})
		s := trio{proxy: closed[0], gw: closed[i+1]}
		name = fmt.Sprintf("saturation, %d connections, %s", satConns, form)
		rep.runs(name, s)
		rep.add(name, "throughput", rpsUnit, single(s.proxy.throughput(), 0, s.gw.throughput()), false, limits{})
	}
	rep.notes = append(rep.notes, fmt.Sprintf("Redis Cluster / one node, gateway: p50 %s, p99 %s, CPU/request %s, "+
		"throughput %s (the redis-cluster rows).",
		ratioString(ms(open[1].quantile(0.5, false)), ms(open[2].quantile(0.5, false))),
		ratioString(ms(open[1].quantile(0.99, false)), ms(open[2].quantile(0.99, false))),
		ratioString(open[1].cpuPer(), open[2].cpuPer()), ratioString(closed[1].throughput(), closed[2].throughput())))
	return nil
}

// halves runs load on each of procs: a short warm-up each, then the measured time in halves,
// in order and back (so that a drift of the machine weighs on all alike), with each server
// process's CPU time around its halves; the results are in the order of procs.
func (b *bench) halves(ctx context.Context, procs []*proc, load func(ctx context.Context, p *proc, d time.Duration) result) []result {
	warm := min(b.o.duration/5, time.Second)
	for _, p := range procs {
		load(ctx, p, warm)
	}
	out := make([]result, len(procs))
	back := slices.Clone(procs)
	slices.Reverse(back)
	for _, p := range append(slices.Clone(procs), back...) {
		c0 := cpuTime(p.pid)
		r := load(ctx, p, b.o.duration/2)
		r.cpu = cpuTime(p.pid) - c0
		out[slices.Index(procs, p)].merge(r)
	}
	return out
}
