package main

import (
	"context"
	"fmt"
	"time"
)

// The user's real load (issue 36, item 3): answers of production length, and the rate a
// server sustains before its tail breaks.
const (
	// longScript is a 500-token answer: 2,000 bytes in 100 text chunks, at once. A plain
	// request of it is 100 upstream events for a gateway that streams upstream, and one body
	// for the proxy and Bifrost.
	longScript = "text?len=2000&chunk=20"
	// ceilingN is how many requests each rate of the ceiling scenario sends, and ceilingP99
	// the tail a rate must keep to count as sustained.
	ceilingN   = 4000
	ceilingP99 = 50 * time.Millisecond
)

// ceilingRates are the fixed rates the ceiling scenario climbs, per second.
var ceilingRates = []float64{500, 1000, 1500, 2000, 2500, 3000, 4000, 5000}

// long runs the nonstream and stream loads with the 500-token answer.
func (b *bench) long(ctx context.Context, rep *report) error {
	for _, v := range []struct {
		stream bool
		rate   float64
	}{{false, 500}, {true, 300}} {
		rate := v.rate * b.o.rateScale
		kind := "non-streamed"
		if v.stream {
			kind = "streamed"
		}
		name := fmt.Sprintf("500-token answer (100 chunks), %s %g/s", kind, rate)
		t, err := b.compare(ctx, name, rep, func(ctx context.Context, pr *proc, d time.Duration) result {
			return b.load.openLoop(ctx, chatCall(pr, longScript, v.stream), rate, d)
		})
		if err != nil {
			return err
		}
		if v.stream {
			rep.latency(t, name, "first content p50", 0.5, true, limits{peer: 0.8})
			rep.latency(t, name, "first content p99", 0.99, true, limits{})
			rep.latency(t, name, "total p99", 0.99, false, limits{})
			rep.cpu(t, name, limits{peer: 0.6})
			continue
		}
		rep.latency(t, name, "p50", 0.5, false, limits{peer: 1})
		rep.latency(t, name, "p99", 0.99, false, limits{peer: 1})
		rep.cpu(t, name, limits{peer: 1})
	}
	return nil
}

// ceiling finds, for each server, the highest of ceilingRates at which ceilingN requests
// keep p99 under ceilingP99 with none failing, climbing until a rate does not.
func (b *bench) ceiling(ctx context.Context, rep *report) error {
	n := ceilingN
	if b.o.ceilingN > 0 {
		n = b.o.ceilingN
	} else if b.o.quick {
		n = ceilingN / 10
	}
	for _, stream := range []bool{false, true} {
		name := "saturation, non-streamed"
		if stream {
			name = "saturation, streamed"
		}
		var best, p50 [3]float64 // by position in targets
		peered := b.c.peer != nil
		for i, p := range b.c.targets() {
			c := chatCall(p, script, stream)
			b.load.openLoop(ctx, c, 200, time.Second) // warm-up
			for _, rate := range ceilingRates {
				rate *= b.o.rateScale
				r := b.load.openLoop(ctx, c, rate, time.Duration(float64(n)/rate*float64(time.Second)))
				if err := ctx.Err(); err != nil {
					return err
				}
				if r.errs > 0 || len(r.samples) == 0 || r.quantile(0.99, false) >= ceilingP99 {
					rep.notes = append(rep.notes, fmt.Sprintf("%s: %s broke at %g/s (p99 %.1f ms, %d of %d failed).",
						name, p.name, rate, ms(r.quantile(0.99, false)), r.errs, r.n))
					break
				}
				best[i], p50[i] = rate, ms(r.quantile(0.5, false))
				if !b.o.inproc {
					time.Sleep(time.Second) // the servers' and the kernel's queues drain between rates
				}
			}
			b.load.close()
		}
		g, pb := best[1], 0.0 // without a peer the gateway is second
		if peered {
			pb, g = best[1], best[2]
		}
		metric := fmt.Sprintf("highest rate with p99 < %d ms (%d requests per rate)", ceilingP99.Milliseconds(), n)
		rep.add(name, metric, rpsUnit, best[0], pb, g, peered, limits{proxy: 0.7, peer: 1})
		pp, gp := p50[1], 0.0
		if peered {
			gp = p50[2]
		} else {
			pp, gp = 0, p50[1]
		}
		rep.add(name, "p50 at that rate", msUnit, p50[0], pp, gp, peered, limits{})
	}
	return nil
}
