package fallback_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/fallback"
)

func TestMemory(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1000, 0)
	m := &fallback.Memory{Threshold: 3, CoolOff: 10 * time.Second, MaxCoolOff: 35 * time.Second,
		Now: func() time.Time { return now }}
	admit := func(force bool) (bool, time.Duration) { return m.Admit(ctx, "t", force) }
	fail := func(ra time.Duration) func() time.Duration {
		return func() time.Duration { return m.Failure(ctx, "t", ra) }
	}
	wait := func(d time.Duration) func() time.Duration {
		return func() time.Duration { now = now.Add(d); return 0 }
	}
	steps := []struct {
		name   string
		do     func() time.Duration
		want   time.Duration
		admit  bool // then Admit(false) reports this
		forced bool // Admit with force
	}{
		{"first failure", fail(0), 0, true, false},
		{"second failure", fail(0), 0, true, false},
		{"third failure cools", fail(0), 10 * time.Second, false, false},
		{"cool-off half over", wait(5 * time.Second), 0, false, false},
		{"cool-off over: one probe", wait(5 * time.Second), 0, true, false},
		{"probe in flight: no second", wait(0), 0, false, false},
		{"probe fails: doubled", fail(0), 20 * time.Second, false, false},
		{"after 20s: probe", wait(20 * time.Second), 0, true, false},
		{"probe fails: capped", fail(0), 35 * time.Second, false, false},
		{"forced probe taken early", wait(0), 0, true, true},
		{"released: cooling again", func() time.Duration { m.Release(ctx, "t"); return 0 }, 0, false, false},
		{"success resets", func() time.Duration { m.Success(ctx, "t"); return 0 }, 0, true, false},
		{"one failure after reset", fail(0), 0, true, false},
		{"Retry-After cools at once", fail(12 * time.Second), 12 * time.Second, false, false},
		{"Retry-After capped", fail(time.Hour), 35 * time.Second, false, false},
	}
	for _, s := range steps {
		if got := s.do(); got != s.want {
			t.Errorf("%s: got cooldown %v, want %v", s.name, got, s.want)
		}
		if got, _ := admit(s.forced); got != s.admit {
			t.Errorf("%s: got admitted %v, want %v", s.name, got, s.admit)
		}
	}
}

func TestMemoryDefaults(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(0, 0)
	m := &fallback.Memory{Now: func() time.Time { return now }}
	var left time.Duration
	for range fallback.DefaultThreshold {
		left = m.Failure(ctx, "t", 0)
	}
	if left != fallback.DefaultCoolOff {
		t.Errorf("got cooldown %v after %d failures, want %v", left, fallback.DefaultThreshold, fallback.DefaultCoolOff)
	}
	for range 20 {
		left = m.Failure(ctx, "t", 0)
	}
	if left != fallback.DefaultMaxCoolOff {
		t.Errorf("got cooldown %v, want the cap %v", left, fallback.DefaultMaxCoolOff)
	}
	if ok, l := m.Admit(ctx, "other", false); !ok || l != 0 {
		t.Errorf("got %v %v for an unknown target, want admitted", ok, l)
	}
}
