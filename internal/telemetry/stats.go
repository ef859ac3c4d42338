package telemetry

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"time"
)

// Stats keeps, per alias and served target, one bucket per minute of the last window:
// requests, errors, fallbacks and histograms of the time to first token and the duration.
// It answers GET /admin/stats for one replica; snapshots of other replicas (Redis) merge in
// exactly, since histograms and counts add up. Safe for concurrent use.
type Stats struct {
	mu     sync.Mutex
	slots  int64 // minutes kept: the window and the current minute
	now    func() time.Time
	series map[statKey][]minute
}

type statKey struct{ alias, target string }

// minute is one minute of one series. Histograms count observations per bucket of
// statBounds; the last bucket is everything above the last bound.
type minute struct {
	at                          int64 // unix minute; a slot with another minute is stale
	requests, errors, fallbacks int64
	ttft, duration              [len(statBounds) + 1]int64
	cache                       [4]int64 // by cacheResults
}

// cacheResults are the response cache's results (X-Sluice-Cache) the statistics count.
var cacheResults = [4]string{"hit", "coalesced", "miss", "bypass"}

// statBounds are histogram bounds in seconds: 1 ms × √2ⁿ up to about ten minutes, so a
// quantile read from them is within about 20% of the truth, at any scale.
var statBounds = func() [39]float64 {
	var b [39]float64
	for i := range b {
		b[i] = 0.001 * math.Pow(math.Sqrt2, float64(i))
	}
	return b
}()

// Sample is what one request adds to its series.
type Sample struct {
	Error     bool
	Fallbacks int
	// TTFT is the time to first token of a stream; 0: none (not a stream, or no text).
	TTFT     time.Duration
	Duration time.Duration
	// Cache is what the response cache did ("hit", "coalesced", "miss", "bypass"; "": the
	// alias does not cache).
	Cache string
}

// NewStats keeps the last window; now is the clock (nil: time.Now).
func NewStats(window time.Duration, now func() time.Time) *Stats {
	if now == nil {
		now = time.Now
	}
	return &Stats{slots: int64(window/time.Minute) + 1, now: now, series: map[statKey][]minute{}}
}

// Record adds s to the series of alias and target (both bounded labels).
func (st *Stats) Record(alias, target string, s Sample) {
	m := st.now().Unix() / 60
	st.mu.Lock()
	defer st.mu.Unlock()
	k := statKey{alias, target}
	ring := st.series[k]
	if ring == nil {
		ring = make([]minute, st.slots)
		st.series[k] = ring
	}
	b := &ring[m%st.slots]
	if b.at != m {
		*b = minute{at: m}
	}
	b.requests++
	if s.Error {
		b.errors++
	}
	b.fallbacks += int64(s.Fallbacks)
	if s.TTFT > 0 {
		b.ttft[bucket(s.TTFT)]++
	}
	b.duration[bucket(s.Duration)]++
	for i, r := range cacheResults {
		if s.Cache == r {
			b.cache[i]++
		}
	}
}

func bucket(d time.Duration) int {
	i, _ := slices.BinarySearch(statBounds[:], d.Seconds())
	return i
}

// Snapshot is one replica's statistics as another replica reads them (JSON in Redis).
// Histograms are sparse: [bucket, count] pairs.
type Snapshot struct {
	Replica string           `json:"replica"`
	At      int64            `json:"at"` // unix milliseconds
	Series  []SnapshotSeries `json:"series"`
}

// SnapshotSeries is one alias and target.
type SnapshotSeries struct {
	Alias   string           `json:"alias"`
	Target  string           `json:"target"`
	Minutes []SnapshotMinute `json:"minutes"`
}

// SnapshotMinute is one minute of a series.
type SnapshotMinute struct {
	At        int64      `json:"m"` // unix minute
	Requests  int64      `json:"n"`
	Errors    int64      `json:"e,omitempty"`
	Fallbacks int64      `json:"f,omitempty"`
	TTFT      [][2]int64 `json:"ttft,omitempty"`
	Duration  [][2]int64 `json:"dur,omitempty"`
	// Cache counts the cache's results, in the order of cacheResults; none: no alias caches.
	Cache []int64 `json:"c,omitempty"`
}

// Snapshot returns the minutes of the window, for other replicas.
func (st *Stats) Snapshot(replica string) Snapshot {
	now := st.now()
	from := now.Unix()/60 - st.slots + 1
	st.mu.Lock()
	defer st.mu.Unlock()
	snap := Snapshot{Replica: replica, At: now.UnixMilli()}
	for k, ring := range st.series {
		s := SnapshotSeries{Alias: k.alias, Target: k.target}
		for i := range ring {
			if b := &ring[i]; b.at >= from && b.requests > 0 {
				sm := SnapshotMinute{At: b.at, Requests: b.requests, Errors: b.errors,
					Fallbacks: b.fallbacks, TTFT: sparse(b.ttft[:]), Duration: sparse(b.duration[:])}
				if b.cache != [4]int64{} {
					sm.Cache = append([]int64(nil), b.cache[:]...)
				}
				s.Minutes = append(s.Minutes, sm)
			}
		}
		if len(s.Minutes) > 0 {
			slices.SortFunc(s.Minutes, func(a, b SnapshotMinute) int { return cmp.Compare(a.At, b.At) })
			snap.Series = append(snap.Series, s)
		}
	}
	slices.SortFunc(snap.Series, func(a, b SnapshotSeries) int {
		return cmp.Or(cmp.Compare(a.Alias, b.Alias), cmp.Compare(a.Target, b.Target))
	})
	return snap
}

func sparse(h []int64) [][2]int64 {
	var out [][2]int64
	for i, n := range h {
		if n > 0 {
			out = append(out, [2]int64{int64(i), n})
		}
	}
	return out
}
