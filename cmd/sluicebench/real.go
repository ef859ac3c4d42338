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

// ceilingRates are the fixed rates the ceiling scenario climbs, per second: steps of 500, so
// that a ratio of two ceilings is not a step's artefact (with 3,000 then 4,000, 0.75x was
// the closest thing to 0.8x).
var ceilingRates = []float64{500, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 4500, 5000}

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
// keep p99 under ceilingP99 with none failing, climbing until a rate does not; in o.rounds
// rounds, the servers' order rotating.
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
		var best, p50 figure
		for i := range b.o.rounds {
			rb, r50 := map[*proc]float64{}, map[*proc]float64{}
			for _, p := range rotation(b.c.targets(), i) {
				var err error
				var broke string
				if rb[p], r50[p], broke, err = b.climb(ctx, p, stream, n); err != nil {
					return err
				}
				if broke != "" {
					rep.notes = append(rep.notes, fmt.Sprintf("%s, round %d: %s %s.", name, i+1, p.name, broke))
				}
			}
			best.p, best.b, best.g = append(best.p, rb[b.c.proxy]), append(best.b, rb[b.c.peer]), append(best.g, rb[b.c.gateway])
			p50.p, p50.b, p50.g = append(p50.p, r50[b.c.proxy]), append(p50.b, r50[b.c.peer]), append(p50.g, r50[b.c.gateway])
		}
		peered := b.c.peer != nil
		metric := fmt.Sprintf("highest rate with p99 < %d ms (%d requests per rate)", ceilingP99.Milliseconds(), n)
		rep.add(name, metric, rpsUnit, best, peered, limits{proxy: 0.8, peer: 1.2}) // issue 51
		rep.add(name, "p50 at that rate", msUnit, p50, peered, limits{})
	}
	return nil
}

// climb is the ceiling scenario on server p: the highest rate it sustained and its p50
// there (0 and 0 if it broke at the first), and where it broke ("": it did not).
func (b *bench) climb(ctx context.Context, p *proc, stream bool, n int) (best, p50 float64, broke string, err error) {
	c := chatCall(p, script, stream)
	b.load.openLoop(ctx, c, 200, time.Second) // warm-up
	defer b.load.close()
	for _, rate := range ceilingRates {
		rate *= b.o.rateScale
		r := b.load.openLoop(ctx, c, rate, time.Duration(float64(n)/rate*float64(time.Second)))
		if err := ctx.Err(); err != nil {
			return 0, 0, "", err
		}
		if r.errs > 0 || len(r.samples) == 0 || r.quantile(0.99, false) >= ceilingP99 {
			return best, p50, fmt.Sprintf("broke at %g/s (p99 %.1f ms, %d of %d failed)",
				rate, ms(r.quantile(0.99, false)), r.errs, r.n), nil
		}
		best, p50 = rate, ms(r.quantile(0.5, false))
		if !b.o.inproc {
			time.Sleep(time.Second) // the servers' and the kernel's queues drain between rates
		}
	}
	return best, p50, "", nil
}
