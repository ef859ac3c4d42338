package cache

import (
	"slices"
	"strings"
	"sync/atomic"
)

// Stat is what the cache did for one alias's requests on this replica since it started
// (GET /admin/stats).
type Stat struct {
	Alias     string `json:"alias"`
	Hits      int64  `json:"hits"`
	Coalesced int64  `json:"coalesced"`
	Misses    int64  `json:"misses"`
	Bypassed  int64  `json:"bypassed"`
	// HitRatio is (hits + coalesced) / (hits + coalesced + misses): the share of the
	// requests the cache could answer that it answered without a provider call.
	HitRatio float64 `json:"hit_ratio"`
}

type counts [4]atomic.Int64 // by result: hit, coalesced, miss, bypass

var resultIndex = map[Result]int{Hit: 0, Coalesced: 1, Miss: 2, Bypass: 3}

func (c *Cache) count(alias string, r Result) {
	v, _ := c.stats.LoadOrStore(alias, &counts{})
	v.(*counts)[resultIndex[r]].Add(1)
}

// Stats are the aliases' counts on this replica, by alias.
func (c *Cache) Stats() []Stat {
	var out []Stat
	c.stats.Range(func(k, v any) bool {
		n := v.(*counts)
		s := Stat{Alias: k.(string), Hits: n[0].Load(), Coalesced: n[1].Load(), Misses: n[2].Load(), Bypassed: n[3].Load()}
		if d := s.Hits + s.Coalesced + s.Misses; d > 0 {
			s.HitRatio = float64(s.Hits+s.Coalesced) / float64(d)
		}
		out = append(out, s)
		return true
	})
	slices.SortFunc(out, func(a, b Stat) int { return strings.Compare(a.Alias, b.Alias) })
	return out
}
