package fallback

import (
	"context"
	"math/rand/v2"
	"time"
)

// Route is how a group picks its member for a request (issue 49). Every route leaves out
// the members cooling down, keeps a conversation on its member (affinity) and, with a Load,
// scales by each member's adaptive weight (View.Weight).
type Route uint8

// Routes.
const (
	// RouteWeighted draws by the configured weights (the default).
	RouteWeighted Route = iota
	// RouteLatency is the power of two choices over the peak EWMA of the time to first
	// token, times the attempts in flight plus one: of two members drawn at random, the
	// lower score serves.
	RouteLatency
	// RouteLeastBusy picks the member with the fewest attempts in flight, fleet-wide.
	RouteLeastBusy
	// RouteCost picks the cheapest member by Target.Price whose recent first-token p95 is
	// within Element.MaxTTFT, else the fastest.
	RouteCost
)

var routeNames = [...]string{"weighted", "latency", "least_busy", "cost"}

// String is the route's name in the configuration.
func (r Route) String() string {
	if int(r) < len(routeNames) {
		return routeNames[r]
	}
	return "unknown"
}

// ParseRoute is the route named s ("" is weighted); false when none is.
func ParseRoute(s string) (Route, bool) {
	if s == "" {
		return RouteWeighted, true
	}
	for i, n := range routeNames {
		if n == s {
			return Route(i), true
		}
	}
	return 0, false
}

// pick chooses the target of element idx, el, for this request among the members that are
// not cooling down and did not time out in this run: the one affinity remembers for the
// conversation if it is one of them, else the one its lookup claimed for a new
// conversation, else by the element's route. nil when none is left.
func (r *Run) pick(ctx context.Context, idx int, el *Element) *Target {
	cands := make([]int, 0, len(el.Targets))
	for i := range el.Targets {
		if !r.timedOut[el.Targets[i].Name] {
			cands = append(cands, i)
		}
	}
	l := r.lookup(ctx, idx, el, cands) // nil: no affinity
	for len(cands) > 0 {
		j := l.remembered(cands)
		if j < 0 {
			j = l.claimed(cands)
		}
		if j < 0 {
			x := -1.0
			if l != nil {
				x = l.x // the same conversation lands on the same member on every replica
			}
			j = r.choose(el, cands, x)
		}
		t := &el.Targets[cands[j]]
		h := r.chain.Health
		if h == nil {
			return t
		}
		ok, left := h.Admit(ctx, t.Name, false)
		if ok {
			return t
		}
		r.skipped = append(r.skipped, skipped{t: t, left: left})
		cands = append(cands[:j], cands[j+1:]...)
	}
	return nil
}

// choose returns an index into cands by the element's route. x in [0, 1) places a new
// conversation by weight (the same on every replica); negative, a random number does.
func (r *Run) choose(el *Element, cands []int, x float64) int {
	if len(cands) == 1 {
		return 0
	}
	ld := r.chain.Load
	if ld == nil || len(cands) > maxViews {
		return r.weighted(el, cands, x, nil)
	}
	var buf [maxViews]View
	vs := buf[:len(cands)]
	for j, i := range cands {
		vs[j] = ld.View(el.Targets[i].Name)
	}
	switch el.Route {
	case RouteLatency:
		if j, ok := r.probe1(vs); ok {
			return j
		}
		return r.twoChoices(vs)
	case RouteLeastBusy:
		return r.best(vs, func(v *View) float64 { return float64(v.InFlight+1) / v.Weight })
	case RouteCost:
		if j, ok := r.probe1(vs); ok {
			return j
		}
		return r.cheapest(el, cands, vs)
	}
	return r.weighted(el, cands, x, vs)
}

// maxViews bounds the members a route reads on the stack; a larger group picks by weight.
const maxViews = 16

// weighted draws an index into cands by the members' weights, each scaled by its adaptive
// weight when vs is not nil, with x in [0, 1), or a random number when x is negative.
func (r *Run) weighted(el *Element, cands []int, x float64, vs []View) int {
	weight := func(j int) float64 {
		w := 1.0
		if el.Weights != nil {
			w = float64(el.Weights[cands[j]])
		}
		if vs != nil {
			w *= vs[j].Weight
		}
		return w
	}
	var total float64
	for j := range cands {
		total += weight(j)
	}
	if x < 0 {
		x = r.rand()
	}
	x *= total
	for j := range cands {
		if x -= weight(j); x < 0 {
			return j
		}
	}
	return len(cands) - 1
}

// probe1 returns, for a ProbeShare of requests, a member with no recent sample, drawn at
// random, when some but not all members have one.
func (r *Run) probe1(vs []View) (int, bool) {
	stale := 0
	for _, v := range vs {
		if !v.Fresh {
			stale++
		}
	}
	if stale == 0 || stale == len(vs) || r.rand() >= ProbeShare {
		return 0, false
	}
	n := int(r.rand() * float64(stale))
	for j, v := range vs {
		if !v.Fresh {
			if n == 0 {
				return j, true
			}
			n--
		}
	}
	return 0, false
}

// speed is a member's latency score: its peak EWMA (1 ms for a member not measured yet, so
// that its attempts in flight still count) times its attempts in flight plus one, over its
// adaptive weight. Lower is better.
func speed(v *View) float64 {
	ms := max(float64(v.Latency)/float64(time.Millisecond), 1)
	return ms * float64(v.InFlight+1) / v.Weight
}

// twoChoices draws two members and returns the one of lower speed score (the power of two
// choices: Mitzenmacher; Finagle's and Helicone's peak EWMA balancers).
func (r *Run) twoChoices(vs []View) int {
	a, b := 0, 1
	if len(vs) > 2 {
		a = int(r.rand() * float64(len(vs)))
		b = int(r.rand() * float64(len(vs)-1))
		if b >= a {
			b++
		}
	}
	sa, sb := speed(&vs[a]), speed(&vs[b])
	if sb < sa || (sb == sa && r.rand() < 0.5) {
		return b
	}
	return a
}

// best returns the member of lowest score, ties drawn at random.
func (r *Run) best(vs []View, score func(*View) float64) int {
	j, low, ties := 0, score(&vs[0]), 1
	for k := 1; k < len(vs); k++ {
		switch s := score(&vs[k]); {
		case s < low:
			j, low, ties = k, s, 1
		case s == low:
			ties++
			if r.rand()*float64(ties) < 1 { // reservoir: each tie equally likely
				j = k
			}
		}
	}
	return j
}

// cheapest is route: cost: the member of lowest price among those whose first-token p95 is
// within the element's MaxTTFT (0: any) and whose adaptive weight is at least one half, the
// faster on a tie; when none is, the fastest.
func (r *Run) cheapest(el *Element, cands []int, vs []View) int {
	j, found := -1, false
	for k := range vs {
		v := &vs[k]
		if (el.MaxTTFT > 0 && v.P95 > el.MaxTTFT) || v.Weight < 0.5 {
			continue
		}
		if !found {
			j, found = k, true
			continue
		}
		pk, pj := el.Targets[cands[k]].Price, el.Targets[cands[j]].Price
		if pk < pj || (pk == pj && speed(v) < speed(&vs[j])) {
			j = k
		}
	}
	if found {
		return j
	}
	return r.best(vs, speed)
}

func (r *Run) rand() float64 {
	if r.chain.Rand != nil {
		return r.chain.Rand()
	}
	return rand.Float64()
}
