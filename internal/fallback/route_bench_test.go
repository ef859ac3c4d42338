package fallback

import (
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// BenchmarkRouteChoice is the choice of a group's member alone, per route, over two members
// with samples in a Meter: what a route adds to a request (issue 49: under 2 µs). Reported,
// never asserted.
func BenchmarkRouteChoice(b *testing.B) {
	m := &Meter{}
	for _, n := range []string{"p/a", "p/b"} {
		m.Latency(n, 20*time.Millisecond)
		m.Begin(n)
		m.End(n, Succeeded)
	}
	for _, route := range []Route{RouteWeighted, RouteLatency, RouteLeastBusy, RouteCost} {
		b.Run(route.String(), func(b *testing.B) {
			c := &Chain{Alias: "pool", Load: m}
			el := &Element{Route: route, MaxTTFT: time.Second, Targets: []Target{{Name: "p/a", Price: 1}, {Name: "p/b", Price: 2}}}
			r := c.Start(&llm.Request{})
			cands := []int{0, 1}
			b.ReportAllocs()
			for b.Loop() {
				r.choose(el, cands, -1)
			}
		})
	}
}
