package fallback_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/fallback"
)

// fleetOf is n replicas on one clock sharing through one store, each routing the alias
// pool of p/a and p/b; tick makes every replica exchange twice (the first ones' exchange
// comes before the later ones wrote).
func fleetOf(t *testing.T, n int) (meters []*fallback.Meter, c *clock, tick func()) {
	t.Helper()
	c, store := newClock(), &sampleMemory{}
	var shares []*fallback.Share
	for i := range n {
		m := &fallback.Meter{Now: c.Now}
		meters = append(meters, m)
		shares = append(shares, &fallback.Share{Meter: m, Store: store, Replica: string(rune('1' + i)),
			Aliases: map[string][]string{"pool": {"p/a", "p/b"}}})
	}
	return meters, c, func() {
		for range 2 {
			for _, s := range shares {
				if err := s.Tick(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// ms is a view's latency in ms.
func ms(m *fallback.Meter, target string) float64 {
	return float64(m.View(target).Latency) / float64(time.Millisecond)
}

// The fleet's peak EWMA (issue 49), both directions of the fleet test on a fake clock: p/a
// slow and p/b fast, each replica having served p/b many times; then p/a is restored and p/b
// slowed. A replica's first slow sample of p/b takes its view of p/b at once, though the
// fleet's digests count many fast samples of it (a mean weighted by samples kept it near
// under a third of the slow one), and the others' at their next exchange, though their own
// samples of p/b are fast and as recent; a replica's fast sample of p/a supersedes the
// others' slow ones of seconds before, here and, after an exchange, there.
func TestShareMergePeak(t *testing.T) {
	meters, c, tick := fleetOf(t, 3)
	for _, m := range meters {
		m.Latency("p/a", 300*time.Millisecond)
		for range 60 {
			c.add(10 * time.Millisecond)
			m.Latency("p/b", 4*time.Millisecond)
		}
	}
	tick()
	for i, m := range meters {
		if a, b := ms(m, "p/a"), ms(m, "p/b"); a < 250 || b > 5 {
			t.Fatalf("replica %d, p/a slow: p/a %.1f ms, p/b %.1f ms; want about 300 and 4", i+1, a, b)
		}
	}

	c.add(5 * time.Second) // the newcomer's turn, in the fleet test
	meters[0].Latency("p/b", 300*time.Millisecond)
	if b := ms(meters[0], "p/b"); b != 300 {
		t.Errorf("replica 1 after its slow sample of p/b: %.1f ms, want 300 (its own, not the fleet's fast mean)", b)
	}
	for i, m := range meters[1:] {
		if b := ms(m, "p/b"); b > 5 {
			t.Errorf("replica %d before the exchange: p/b %.1f ms, want its own fast view", i+2, b)
		}
	}
	c.add(500 * time.Millisecond)
	meters[1].Latency("p/b", 4*time.Millisecond) // a fast sample as recent: the slow one still counts
	tick()
	for i, m := range meters {
		if b := ms(m, "p/b"); b < 290 {
			t.Errorf("replica %d after the exchange: p/b %.1f ms, want about 300 (the fleet's peak)", i+1, b)
		}
	}

	c.add(500 * time.Millisecond)
	meters[0].Latency("p/a", 4*time.Millisecond)
	a := ms(meters[0], "p/a")
	if a > 270 {
		t.Errorf("replica 1 after a fast sample of p/a: %.1f ms, want its own view (pulled down by 5.5 s of decay)", a)
	}
	tick()
	for i, m := range meters[1:] {
		if got := ms(m, "p/a"); got != a {
			t.Errorf("replica %d after the exchange: p/a %.1f ms, want replica 1's %.1f (its own slow sample is 6 s older)", i+2, got, a)
		}
	}
	for i, m := range meters {
		if ms(m, "p/a") >= ms(m, "p/b") {
			t.Errorf("replica %d: p/a %.1f ms, p/b %.1f ms; want p/a the faster", i+1, ms(m, "p/a"), ms(m, "p/b"))
		}
	}
}
