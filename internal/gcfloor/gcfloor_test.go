package gcfloor

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		floor, live int64
		want        int
	}{
		{64 << 20, 0, 1000},
		{64 << 20, 1 << 20, 1000},      // 6300% wanted: capped
		{64 << 20, 8 << 20, 700},       // the next collection at 64 MiB
		{64 << 20, 16 << 20, 300},      //
		{64 << 20, 32 << 20, 100},      // half the floor: the default
		{64 << 20, 200 << 20, 100},     // a large heap: the default
		{64 << 20, 30 << 20, 113},      // just under half
		{0, 1 << 20, 100},              // no floor
		{1 << 30, 1 << 20, maxPercent}, // capped
	} {
		if got := Percent(c.floor, c.live, 100); got != c.want {
			t.Errorf("Percent(%d, %d) = %d, want %d", c.floor, c.live, got, c.want)
		}
	}
}

func TestEnv(t *testing.T) {
	for in, want := range map[string]int64{"": Default, "off": 0, "0": 0, "1048576": 1 << 20, "32MiB": 32 << 20,
		"2GiB": 2 << 30, "512KiB": 512 << 10} {
		got, err := Env(func(string) string { return in })
		if err != nil || got != want {
			t.Errorf("SLUICE_GC_FLOOR=%q: %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"-1", "lots", "64MB", "MiB", "99999999999GiB"} {
		got, err := Env(func(string) string { return in })
		if err == nil || got != Default {
			t.Errorf("SLUICE_GC_FLOOR=%q: %d, %v; want an error and the default", in, got, err)
		}
	}
}

// gogc reads GOGC.
func gogc() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// settle runs collections until GOGC is what want says, or fails.
func settle(t *testing.T, what string, want func(int) bool) {
	t.Helper()
	for range 200 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond) // the cleanup runs on its own goroutine after the collection
		if want(gogc()) {
			return
		}
	}
	t.Fatalf("GOGC %d, want %s", gogc(), what)
}

// TestTuner: on a small heap GOGC rises; with a live heap past half the floor it comes
// back to 100; Stop leaves 100.
func TestTuner(t *testing.T) {
	defer debug.SetGCPercent(gogc())
	if Start(8<<20, func(k string) string { return map[string]string{"GOGC": "50"}[k] }) != nil {
		t.Fatal("tuning with GOGC set")
	}
	tu := Start(64<<20, func(string) string { return "" })
	if tu == nil {
		t.Fatal("no tuner")
	}
	defer tu.Stop()
	settle(t, "above 100 on a small heap", func(p int) bool { return p > 100 })
	live := make([]byte, 48<<20) // past half the floor
	settle(t, "100 with 48 MiB live", func(p int) bool { return p == 100 })
	runtime.KeepAlive(live)
	settle(t, "above 100 again", func(p int) bool { return p > 100 })
	tu.Stop()
	if p := gogc(); p != 100 {
		t.Errorf("GOGC %d after Stop, want 100", p)
	}
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	if p := gogc(); p != 100 {
		t.Errorf("GOGC %d after a collection after Stop, want 100", p)
	}
}

// TestMemoryLimit: with a memory limit the floor is at most half of it, and a live heap
// past the floor's third is collected at GOGC=200, not 100.
func TestMemoryLimit(t *testing.T) {
	defer debug.SetGCPercent(gogc())
	old := debug.SetMemoryLimit(32 << 20)
	tu := Start(1<<30, func(string) string { return "" })
	if tu.floor != 16<<20 || tu.least != limitPercent {
		t.Errorf("floor %d, least GOGC %d under a 32 MiB limit, want 16 MiB and %d", tu.floor, tu.least, limitPercent)
	}
	tu.Stop()
	debug.SetMemoryLimit(1 << 30)
	defer debug.SetMemoryLimit(old)
	tu = Start(64<<20, func(string) string { return "" })
	defer tu.Stop()
	live := make([]byte, 48<<20) // past a third of the floor
	settle(t, "200 with 48 MiB live under a limit", func(p int) bool { return p == limitPercent })
	runtime.KeepAlive(live)
	for _, c := range []struct {
		live int64
		want int
	}{{16 << 20, 300}, {24 << 20, 200}, {48 << 20, 200}} {
		if got := Percent(64<<20, c.live, limitPercent); got != c.want {
			t.Errorf("Percent(64 MiB, %d MiB, %d) = %d, want %d", c.live>>20, limitPercent, got, c.want)
		}
	}
}
