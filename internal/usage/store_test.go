package usage

import (
	"testing"
	"time"
)

// TestDay: Day is the UTC day of any time, the one asked for last or another, before the
// epoch too.
func TestDay(t *testing.T) {
	loc := time.FixedZone("x", -5*3600)
	for _, tm := range []time.Time{
		time.Date(2026, 12, 6, 23, 59, 59, 0, time.UTC), time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 6, 20, 0, 0, 0, loc), time.Date(2026, 12, 6, 18, 0, 0, 0, loc),
		time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC), time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC),
	} {
		for range 2 {
			if got, want := Day(tm), tm.UTC().Format(DayLayout); got != want {
				t.Errorf("Day(%v) = %s, want %s", tm, got, want)
			}
		}
	}
}
