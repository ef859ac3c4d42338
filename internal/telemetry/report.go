package telemetry

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Report is the answer of GET /admin/stats: per alias and served target, the last Minutes
// minutes of every replica that reported.
type Report struct {
	Object   string `json:"object"` // "stats"
	Minutes  int    `json:"minutes"`
	Replicas int    `json:"replicas"`
	// Partial: the shared store (Redis) did not answer; the figures are this replica's.
	Partial bool  `json:"partial,omitempty"`
	Data    []Row `json:"data"`
	// Cache is what the response cache did per alias that caches (absent when none did),
	// sorted by alias.
	Cache []CacheRow `json:"cache,omitempty"`
}

// CacheRow is the response cache's results of one alias.
type CacheRow struct {
	Alias     string `json:"alias"`
	Hits      int64  `json:"hits"`
	Coalesced int64  `json:"coalesced"`
	Misses    int64  `json:"misses"`
	Bypassed  int64  `json:"bypassed"`
	// HitRatio is (hits + coalesced) / (hits + coalesced + misses): the share of the
	// requests the cache could answer that it answered without a provider call.
	HitRatio float64 `json:"hit_ratio"`
}

// Row is one alias and target. Target is empty for requests no target served (an
// exhausted chain). Errors are answers that failed, a client that left excepted.
type Row struct {
	Alias     string    `json:"alias"`
	Target    string    `json:"target"`
	Requests  int64     `json:"requests"`
	Errors    int64     `json:"errors"`
	Fallbacks int64     `json:"fallbacks"`
	TTFT      Quantiles `json:"ttft_ms"`
	Duration  Quantiles `json:"duration_ms"`
}

// Quantiles summarize a histogram, in milliseconds; zero when Count is.
type Quantiles struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
}

type rowAcc struct {
	row            Row
	ttft, duration [len(statBounds) + 1]int64
}

// Merge merges snaps (this replica's first, then the others') over the last minutes minutes
// ending now. Snapshots older than that are left out.
func Merge(now time.Time, minutes int, snaps []Snapshot) Report {
	from := now.Unix()/60 - int64(minutes) + 1
	acc := map[statKey]*rowAcc{}
	cached := map[string]*[4]int64{}
	rep := Report{Object: "stats", Minutes: minutes, Data: []Row{}}
	for _, sn := range snaps {
		if sn.At < from*60*1000 {
			continue // a replica that stopped reporting before the window
		}
		rep.Replicas++
		for _, s := range sn.Series {
			k := statKey{s.Alias, s.Target}
			a := acc[k]
			for _, m := range s.Minutes {
				if m.At < from {
					continue
				}
				if a == nil {
					a = &rowAcc{row: Row{Alias: s.Alias, Target: s.Target}}
					acc[k] = a
				}
				a.row.Requests += m.Requests
				a.row.Errors += m.Errors
				a.row.Fallbacks += m.Fallbacks
				add(a.ttft[:], m.TTFT)
				add(a.duration[:], m.Duration)
				if len(m.Cache) > 0 {
					c := cached[s.Alias]
					if c == nil {
						c = &[4]int64{}
						cached[s.Alias] = c
					}
					for i := range min(len(m.Cache), len(c)) {
						c[i] += m.Cache[i]
					}
				}
			}
		}
	}
	for _, a := range acc {
		a.row.TTFT, a.row.Duration = quantiles(a.ttft[:]), quantiles(a.duration[:])
		rep.Data = append(rep.Data, a.row)
	}
	slices.SortFunc(rep.Data, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.Alias, b.Alias), cmp.Compare(a.Target, b.Target))
	})
	for alias, c := range cached {
		r := CacheRow{Alias: alias, Hits: c[0], Coalesced: c[1], Misses: c[2], Bypassed: c[3]}
		if d := r.Hits + r.Coalesced + r.Misses; d > 0 {
			r.HitRatio = float64(r.Hits+r.Coalesced) / float64(d)
		}
		rep.Cache = append(rep.Cache, r)
	}
	slices.SortFunc(rep.Cache, func(a, b CacheRow) int { return cmp.Compare(a.Alias, b.Alias) })
	return rep
}

// add adds sparse pairs into h, ignoring buckets out of range (a snapshot of another build).
func add(h []int64, pairs [][2]int64) {
	for _, p := range pairs {
		if p[0] >= 0 && p[0] < int64(len(h)) && p[1] > 0 {
			h[p[0]] += p[1]
		}
	}
}

func quantiles(h []int64) Quantiles {
	var q Quantiles
	for _, n := range h {
		q.Count += n
	}
	if q.Count > 0 {
		q.P50, q.P95, q.P99 = quantile(h, q.Count, 0.50), quantile(h, q.Count, 0.95), quantile(h, q.Count, 0.99)
	}
	return q
}

// quantile estimates the q-quantile in milliseconds by linear interpolation inside its
// bucket, as Prometheus's histogram_quantile does; above the last bound it is the last bound.
func quantile(h []int64, total int64, q float64) float64 {
	rank := q * float64(total)
	var cum int64
	for i, n := range h {
		if n == 0 || float64(cum+n) < rank {
			cum += n
			continue
		}
		if i == len(statBounds) {
			return ms3(statBounds[i-1])
		}
		lo := 0.0
		if i > 0 {
			lo = statBounds[i-1]
		}
		return ms3(lo + (statBounds[i]-lo)*(rank-float64(cum))/float64(n))
	}
	return ms3(statBounds[len(statBounds)-1])
}

// ms3 is seconds as milliseconds, rounded to the microsecond.
func ms3(s float64) float64 { return math.Round(s*1e6) / 1e3 }
