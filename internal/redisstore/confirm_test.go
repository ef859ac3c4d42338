package redisstore

import (
	"testing"
	"time"
)

// The queue of unconfirmed writes keeps at most max, forgetting the oldest; take forgets
// those past unconfirmedAge, and on a cluster takes one hash tag at a time, oldest first.
func TestUnconfirmedBoundAgeAndSlot(t *testing.T) {
	now := time.Now()
	w := func(key string, age time.Duration) pending {
		return pending{w: write{keys: []string{key}, idem: true}, at: now.Add(-age)}
	}
	keys := func(ps []pending) (out []string) {
		for _, p := range ps {
			out = append(out, p.w.keys[0])
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		max, n    int
		bySlot    bool
		in        []pending
		want      []string // taken
		left      int
		forgotten int64
	}{
		{name: "bound", max: 2, n: 10, in: []pending{w("a", 0), w("b", 0), w("c", 0)}, want: []string{"b", "c"}, forgotten: 1},
		{name: "age", max: 10, n: 10, in: []pending{w("old", unconfirmedAge+time.Second), w("new", 0)}, want: []string{"new"}, forgotten: 1},
		{name: "batch", max: 10, n: 2, in: []pending{w("a", 0), w("b", 0), w("c", 0)}, want: []string{"a", "b"}, left: 1},
		{name: "one slot", max: 10, n: 10, bySlot: true,
			in:   []pending{w("x{usage:1}", 0), w("x{budget:k}", 0), w("y{usage:1}:r:2", 0)},
			want: []string{"x{usage:1}", "y{usage:1}:r:2"}, left: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := unconfirmed{max: tc.max}
			u.keep(tc.in...)
			got := keys(u.take(tc.n, now, tc.bySlot))
			if len(got) != len(tc.want) || u.len() != tc.left || u.takeForgot() != tc.forgotten {
				t.Fatalf("got %v, %d left, want %v, %d left, %d forgotten", got, u.len(), tc.want, tc.left, tc.forgotten)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// tag is Redis Cluster's hash tag rule: the first {...}, when not empty.
func TestTag(t *testing.T) {
	for key, want := range map[string]string{
		"sluice:{usage:2026-07-03}:r:x": "usage:2026-07-03",
		"plain":                         "plain",
		"a{}b{c}":                       "a{}b{c}",
		"a{b":                           "a{b",
	} {
		if got := tag(key); got != want {
			t.Errorf("tag(%q): got %q, want %q", key, got, want)
		}
	}
}
