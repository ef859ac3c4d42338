// Package gcfloor keeps the Go collector from running on a small heap more often than it
// must (issue 51). With the runtime's default (GOGC=100) a collection starts whenever the
// heap has grown by as much as is live: a gateway serving plain requests keeps a few MiB
// live and collects many times a second, some 10% of its CPU. Floor raises GOGC, after each
// collection, so that the next one waits until the heap reaches at least a floor (64 MiB by
// default), and lowers it back to 100 as the live heap grows past half the floor: a large
// heap (thousands of held streams) is collected exactly as before, and the process never
// holds more than the floor beyond what the default would.
//
// An operator's own GOGC or GOMEMLIMIT wins: with GOGC set nothing is tuned, and with
// GOMEMLIMIT set the floor is at most half the limit (the runtime collects harder as the
// heap nears the limit, whatever GOGC says). Under a limit, a large heap is collected at
// GOGC=200 instead of 100 (limitPercent): the limit caps the heap either way.
package gcfloor

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
)

// Default is the floor when SLUICE_GC_FLOOR does not say.
const Default = 64 << 20

// limitPercent is the least GOGC under a memory limit. Thousands of held streams keep some
// hundreds of MiB live, and each collection of them, on the one or two cores a gateway has,
// holds back the streams that wait for their first content (at 6,500 streams, in noisy
// runs, their p99 was 60 to 135 ms at GOGC=100 and 31 ms at 200: docs/performance.md,
// "Held streams at 2,000 and 6,500"). Without a
// limit that would let such a heap grow to three times what is live instead of twice; under
// one, the runtime collects harder as the heap nears it, whatever GOGC says.
const limitPercent = 200

// maxPercent bounds the GOGC Floor sets: a nearly empty heap would otherwise ask for
// thousands of percent.
const maxPercent = 1000

// Env reads the floor from SLUICE_GC_FLOOR (bytes, with an optional KiB, MiB or GiB
// suffix; 0 or "off" turns it off) and returns it with what the variable said wrong; an
// unset or empty variable is Default.
func Env(getenv func(string) string) (int64, error) {
	s := getenv("SLUICE_GC_FLOOR")
	if s == "" {
		return Default, nil
	}
	if s == "off" {
		return 0, nil
	}
	mult := int64(1)
	for suf, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if n := len(s) - len(suf); n > 0 && s[n:] == suf {
			s, mult = s[:n], m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return Default, fmt.Errorf("SLUICE_GC_FLOOR=%q: want bytes (with KiB, MiB or GiB), 0 or off; using %d MiB", getenv("SLUICE_GC_FLOOR"), Default>>20)
	}
	return n * mult, nil
}

// Tuner tunes GOGC after every collection until Stop.
type Tuner struct {
	floor   int64
	least   int // the least GOGC: 100, limitPercent under a memory limit
	stopped atomic.Bool
	mu      sync.Mutex // serialises tune
	percent int        // what tune set last
	sample  []metrics.Sample
}

// Start starts tuning for floor bytes and returns the tuner; nil when there is nothing to
// do: floor <= 0, or GOGC set in the environment (getenv, nil for os.Getenv).
func Start(floor int64, getenv func(string) string) *Tuner {
	if getenv == nil {
		getenv = os.Getenv
	}
	if floor <= 0 || getenv("GOGC") != "" {
		return nil
	}
	least := 100
	if lim := debug.SetMemoryLimit(-1); lim < math.MaxInt64 { // -1 reads the limit
		floor, least = min(floor, lim/2), limitPercent
	}
	t := &Tuner{floor: floor, least: least, percent: 100, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	t.tune()
	t.arm()
	return t
}

// Stop stops tuning and puts GOGC back to 100. A nil Tuner does nothing.
func (t *Tuner) Stop() {
	if t == nil || t.stopped.Swap(true) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.percent != 100 {
		debug.SetGCPercent(100)
		t.percent = 100
	}
}

// sentinel is an object that dies at every collection: its cleanup tunes and makes the
// next one. It holds a pointer so that it is not a tiny allocation (which shares its
// block with others and may outlive a collection).
type sentinel struct {
	_ *sentinel
	_ [16]byte
}

func (t *Tuner) arm() {
	runtime.AddCleanup(new(sentinel), func(t *Tuner) {
		if t.stopped.Load() {
			return
		}
		t.tune()
		t.arm()
	}, t)
}

// tune sets GOGC for the live heap the last collection found.
func (t *Tuner) tune() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped.Load() {
		return
	}
	metrics.Read(t.sample)
	p := Percent(t.floor, int64(t.sample[0].Value.Uint64()), t.least)
	// Only a change of more than a tenth is written: the value moves with every
	// collection's live heap, and the collector's pacing needs no finer steps.
	if d := p - t.percent; d > t.percent/10 || -d > t.percent/10 {
		debug.SetGCPercent(p)
		t.percent = p
	}
}

// Percent is the GOGC that puts the next collection at floor bytes for live bytes live,
// within [least, 1000]: least once live reaches a third of the floor at 200, half at 100.
func Percent(floor, live int64, least int) int {
	if live <= 0 {
		return maxPercent
	}
	p := (floor - live) * 100 / live
	return int(max(int64(least), min(p, maxPercent)))
}
