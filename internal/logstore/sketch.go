package logstore

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Sketch counts first-token times in fixed log-scale bins, so that the p50 and p95 of any
// set of hours is the sum of their sketches (issue 50): a rollup keeps one, and a usage row
// merges the rollups' with the records' of its edges. Bin 0 holds (0, sketchLow] ms, bin i
// (sketchLow·r^(i-1), sketchLow·r^i] with r = sketchRatio, the last bin everything above;
// times of 0 (no first token) are in no bin. A quantile is exact to within one bin: ±25%.
type Sketch [SketchBins]int64

// SketchBins is how many bins a Sketch has: from 8 ms to some 90 s in steps of 1.5×.
const SketchBins = 24

const (
	sketchLow   = 8.0
	sketchRatio = 1.5
)

// sketchUpper are the bins' upper bounds (the last bin has none: +Inf). The SQL of both
// stores compares with the same float64 values, formatted exactly (sketchCases).
var sketchUpper = func() [SketchBins]float64 {
	var u [SketchBins]float64
	for i := range u {
		u[i] = sketchLow * math.Pow(sketchRatio, float64(i))
	}
	u[SketchBins-1] = math.Inf(1)
	return u
}()

// bin is the bin of a first-token time ms, -1 for none (0, negative or not a number).
func sketchBin(ms float64) int {
	if !(ms > 0) {
		return -1
	}
	for i, u := range sketchUpper {
		if ms <= u {
			return i
		}
	}
	return SketchBins - 1
}

// Add counts one first-token time (0: none, not counted).
func (s *Sketch) Add(ms float64) {
	if i := sketchBin(ms); i >= 0 {
		s[i]++
	}
}

// Merge adds o's counts to s.
func (s *Sketch) Merge(o *Sketch) {
	for i := range s {
		s[i] += o[i]
	}
}

// Count is how many times s holds.
func (s *Sketch) Count() int64 {
	var n int64
	for _, c := range s {
		n += c
	}
	return n
}

// Quantile estimates the q-th quantile (0..1) of the times s holds, 0 when it holds none:
// the bin of the rank q·(n-1) (as percentile_cont ranks), interpolated within the bin on a
// log scale (linearly in bin 0, whose lower bound is 0).
func (s *Sketch) Quantile(q float64) float64 {
	n := s.Count()
	if n == 0 {
		return 0
	}
	rank := q * float64(n-1)
	var seen int64
	for i, c := range s {
		if c == 0 || float64(seen+c) <= rank {
			seen += c
			continue
		}
		frac := (rank - float64(seen) + 0.5) / float64(c) // the rank's place in the bin
		hi := sketchUpper[i]
		if i == SketchBins-1 {
			hi = sketchUpper[i-1] * sketchRatio
		}
		if i == 0 {
			return hi * frac
		}
		lo := sketchUpper[i-1]
		return lo * math.Pow(hi/lo, frac)
	}
	return sketchUpper[SketchBins-2] * sketchRatio
}

// sketchCols are the rollup table's sketch columns, ft00..ft23, joined with ", ".
var sketchCols = func() string {
	c := make([]string, SketchBins)
	for i := range c {
		c[i] = fmt.Sprintf("ft%02d", i)
	}
	return strings.Join(c, ", ")
}()

// sketchCases is the SQL of a record's sketch, one column a bin (1 when col's time is in
// it), for the records' edge of a usage query and the migrations that fill the rollups
// from the records already kept. The bounds are written as Go's shortest exact float64.
func sketchCases(col string, agg string) string {
	c := make([]string, SketchBins)
	lo := "0"
	for i := range c {
		cond := col + " > " + lo
		if i < SketchBins-1 {
			hi := strconv.FormatFloat(sketchUpper[i], 'g', -1, 64)
			cond += " AND " + col + " <= " + hi
			lo = hi
		}
		c[i] = fmt.Sprintf("%s(CASE WHEN %s THEN 1 ELSE 0 END)", agg, cond)
	}
	return strings.Join(c, ", ")
}
