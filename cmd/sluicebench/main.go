// Command sluicebench is the load benchmark of `make bench` (issue 5): it starts the mock
// upstream, the gateway and a bare httputil.ReverseProxy in front of the same mock, drives the
// gateway and the proxy with the same load, and prints a markdown table of the ratios against
// the targets of issue 5. Loopback only, bounded in time.
//
//	sluicebench [-duration 10s] [-scenarios nonstream,stream,saturation,memory,redis-hung,redis-cluster] [-streams 2000]
//	            [-rounds 3] [-pin=false] [-quick] [-cpuprofile FILE] [-memprofile FILE] [-heldprofile FILE]
//
// Each server runs in its own process (this binary re-executed with -serve), so none shares a
// Go runtime with the load generator. Each server under test runs pinned to one core, the
// mock and the load generator to the others (-pin=false: unpinned), and each load runs in
// alternating rounds, the servers' order rotating: every figure has its spread, and a target
// holds only when it holds in every round. The exit code is 0 when a target does not hold: the
// table reports it. It is non-zero only when the harness itself fails.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	var (
		o       options
		scens   string
		serve   string
		addr    string
		up      string
		rdb     string
		profile string
	)
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "measured time per scenario and target")
	flag.StringVar(&scens, "scenarios", strings.Join(allScenarios, ","), "comma list of scenarios: "+strings.Join(allScenarios, ", "))
	flag.IntVar(&o.streams, "streams", 2000, "concurrent open streams of the memory scenario")
	flag.IntVar(&o.rounds, "rounds", 3, "alternating rounds of each load (the servers' order rotating); -duration is split among them")
	flag.BoolVar(&o.pin, "pin", true, "pin each server under test to one core and the mock and the load to the others (sched_setaffinity, else taskset)")
	flag.BoolVar(&o.quick, "quick", false, "smoke mode: 2 s per scenario, 200 streams unless -streams is given")
	flag.StringVar(&profile, "cpuprofile", "", "write a CPU profile of the gateway over the selected scenarios to `file`")
	flag.StringVar(&o.heldprof, "heldprofile", "", "write a heap profile of the gateway to `file` while the memory scenario's streams are open (go tool pprof -sample_index=inuse_space), its goroutines to file.goroutines")
	flag.StringVar(&o.memprofile, "memprofile", "", "write an allocation profile of the gateway (since its start) to `file` after the scenarios")
	flag.StringVar(&serve, "serve", "", "internal: serve mock, gateway or proxy in this process")
	flag.StringVar(&addr, "addr", "127.0.0.1:0", "internal: listen address of -serve")
	flag.StringVar(&up, "upstream", "", "internal: the mock's base URL, for -serve gateway|proxy")
	flag.StringVar(&rdb, "redis", "", "internal: the Redis URL of -serve gateway (on_failure: open)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	var err error
	if serve != "" {
		err = serveChild(ctx, serve, addr, up, rdb, profile)
	} else {
		streamsSet := false
		flag.Visit(func(f *flag.Flag) { streamsSet = streamsSet || f.Name == "streams" })
		if o.quick {
			o.duration = 2 * time.Second
			if !streamsSet {
				o.streams = 200
			}
		}
		o.scenarios = strings.Split(scens, ",")
		o.cpuprofile = profile
		if o.peer, err = peerFromEnv(os.Getenv); err == nil {
			err = run(ctx, o, os.Stdout)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sluicebench:", err)
		os.Exit(1)
	}
}
