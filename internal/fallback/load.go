package fallback

import (
	"math"
	"slices"
	"sync"
	"time"
)

// Load is what routing learns of targets (issue 49): the chain reports every attempt to it,
// and a group's route (route.go) reads it to pick a member. Implementations are safe for
// concurrent use and never wait on a network in any of these calls, which are on every
// request's path: Meter keeps this replica's samples and the fleet's last digest, which
// Share brings in the background.
type Load interface {
	// Begin counts an attempt on target in flight until its End.
	Begin(target string)
	// Latency records an attempt's time to its first healthy event (a plain call's whole
	// time: its first event comes with the body), or to its timeout.
	Latency(target string, d time.Duration)
	// End ends an attempt Begin counted, with its verdict.
	End(target string, v Verdict)
	// View is what routing knows of target now.
	View(target string) View
}

// Verdict is how an attempt ended, for Load.End.
type Verdict uint8

// Verdicts.
const (
	// Neutral: the attempt says nothing of the target (the client left, the request was
	// refused as invalid, the attempt was abandoned).
	Neutral Verdict = iota
	Succeeded
	Failed // an error or a timeout
)

// View is a target's recent behaviour, this replica's and the fleet's.
type View struct {
	// Latency is the peak EWMA of the time to first token: a slower sample takes it at
	// once, a faster one pulls it down with the decay, and it fades towards 0 with no
	// sample. 0: none.
	Latency time.Duration
	// P95 is the first-token time's 95th percentile over the decay window; 0: no sample.
	P95 time.Duration
	// InFlight is the attempts in flight on the target, every replica's.
	InFlight int
	// ErrorRate is the recent share of failed attempts (timeouts included), in [0, 1],
	// counted as if at least MinSamples were seen: a new target is not condemned by one.
	ErrorRate float64
	// Weight is the adaptive health, in [MinWeight, 1]: 1 - 4×ErrorRate; a group's weights
	// and its routes' scores are scaled by it.
	Weight float64
	// Fresh: a sample within ProbeAfter, here or on another replica.
	Fresh bool
}

// Routing constants (issue 49).
const (
	// DefaultDecay is the time constant of the EWMAs and the window of the p95.
	DefaultDecay = 30 * time.Second
	// ProbeAfter is how long a target may go without a sample before it is probed.
	ProbeAfter = 10 * time.Second
	// ProbeShare is the share of a group's requests that probe one of its targets without
	// a recent sample, under route: latency and cost.
	ProbeShare = 0.05
	// MinSamples is the number of attempts under which an error rate is discounted.
	MinSamples = 5
	// MinWeight is the lowest adaptive weight: a failing target keeps a trickle of
	// traffic, and recovers as that succeeds.
	MinWeight = 0.05
)

// Meter is a Load kept in this process, merged with the fleet's digest when a Share feeds
// it. The zero value is ready (the real clock, DefaultDecay). Safe for concurrent use.
type Meter struct {
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Decay is the EWMAs' time constant and the p95's window; 0 is DefaultDecay.
	Decay time.Duration

	mu    sync.Mutex
	m     map[string]*gauge
	fleet map[string]Digest // the other replicas', merged, by target
}

var _ Load = (*Meter)(nil)

// gauge is one target's local state.
type gauge struct {
	cost     float64   // peak EWMA of first-token time, ms, as of at
	n        float64   // latency samples, decayed, as of at
	at       time.Time // of cost and n
	fails    float64   // failed attempts, decayed, as of errAt
	total    float64   // attempts with a verdict, decayed, as of errAt
	errAt    time.Time
	inflight int
	last     time.Time // of the last sample of either kind
	ring     [32]timed // the last first-token times, for the p95
	ri       int
	p95      time.Duration // cached over ring; valid until p95Until
	p95Until time.Time
}

type timed struct {
	at time.Time
	d  time.Duration
}

// Digest is a target's state as one replica publishes it (Share), or several merged: ms
// and counts, decayed to when it was made.
type Digest struct {
	Cost     float64 `json:"c"` // peak EWMA, ms
	N        float64 `json:"n"` // latency samples
	Fails    float64 `json:"f"`
	Total    float64 `json:"t"`
	P95      float64 `json:"p"` // ms
	InFlight int     `json:"i"`
	Fresh    bool    `json:"r,omitempty"`
	// Last is when the last latency sample was taken, in Unix ms (0: none): merge keeps
	// the freshest replicas' Cost. The replicas' clocks must agree to well under MergeWithin.
	Last int64 `json:"l,omitempty"`
}

// MergeWithin is how close to the freshest latency sample of a target, on any replica, a
// replica's last one must be for its peak EWMA to count in the fleet's (merge): about two
// exchanges, the time a replica's news takes to reach the others.
const MergeWithin = 2 * DefaultShareEvery

func (m *Meter) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func (m *Meter) decay() time.Duration {
	if m.Decay > 0 {
		return m.Decay
	}
	return DefaultDecay
}

// w is the weight left to a value set at since now: e^(-Δt/τ).
func (m *Meter) w(at, now time.Time) float64 {
	if at.IsZero() {
		return 0
	}
	return math.Exp(-float64(now.Sub(at)) / float64(m.decay()))
}

// get returns target's gauge, made if new; m.mu held.
func (m *Meter) get(target string) *gauge {
	g := m.m[target]
	if g == nil {
		if m.m == nil {
			m.m = map[string]*gauge{}
		}
		g = &gauge{}
		m.m[target] = g
	}
	return g
}

// Begin implements Load.
func (m *Meter) Begin(target string) {
	m.mu.Lock()
	m.get(target).inflight++
	m.mu.Unlock()
}

// Latency implements Load: Finagle's peak EWMA, a slower sample taken at once.
func (m *Meter) Latency(target string, d time.Duration) {
	now := m.now()
	ms := float64(d) / float64(time.Millisecond)
	m.mu.Lock()
	defer m.mu.Unlock()
	g := m.get(target)
	w := m.w(g.at, now)
	if c := g.cost * w; ms > c {
		g.cost = ms
	} else {
		g.cost = c + (ms-c)*(1-w)
	}
	g.n, g.at, g.last = g.n*w+1, now, now
	g.ring[g.ri] = timed{at: now, d: d}
	g.ri = (g.ri + 1) % len(g.ring)
	g.p95Until = time.Time{} // recompute at the next read
}

// End implements Load.
func (m *Meter) End(target string, v Verdict) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	g := m.get(target)
	g.inflight = max(g.inflight-1, 0)
	if v == Neutral {
		return
	}
	w := m.w(g.errAt, now)
	g.fails, g.total, g.errAt, g.last = g.fails*w, g.total*w+1, now, now
	if v == Failed {
		g.fails++
	}
}

// View implements Load.
func (m *Meter) View(target string) View {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.local(target, now)
	if f, ok := m.fleet[target]; ok {
		d = merge(d, f)
	}
	return d.view()
}

// local is target's digest at now; m.mu held.
func (m *Meter) local(target string, now time.Time) Digest {
	g := m.m[target]
	if g == nil {
		return Digest{}
	}
	w, we := m.w(g.at, now), m.w(g.errAt, now)
	d := Digest{Cost: g.cost * w, N: g.n * w, Fails: g.fails * we, Total: g.total * we,
		P95: float64(m.p95(g, now)) / float64(time.Millisecond), InFlight: g.inflight,
		Fresh: !g.last.IsZero() && now.Sub(g.last) < ProbeAfter}
	if !g.at.IsZero() {
		d.Last = g.at.UnixMilli()
	}
	return d
}

// p95 is the nearest-rank 95th percentile of g's first-token times within the window,
// cached until its oldest sample leaves it; m.mu held.
func (m *Meter) p95(g *gauge, now time.Time) time.Duration {
	if now.Before(g.p95Until) {
		return g.p95
	}
	var buf [len(g.ring)]time.Duration
	ds := buf[:0]
	since, oldest := now.Add(-m.decay()), now
	for _, s := range g.ring {
		if !s.at.IsZero() && s.at.After(since) {
			ds = append(ds, s.d)
			if s.at.Before(oldest) {
				oldest = s.at
			}
		}
	}
	g.p95, g.p95Until = 0, now.Add(time.Second)
	if len(ds) > 0 {
		slices.Sort(ds)
		g.p95 = ds[(len(ds)*95+99)/100-1]
		g.p95Until = oldest.Add(m.decay())
	}
	return g.p95
}

// merge adds b to a: counts and in-flight add up, the p95 is the worse one, and the cost
// the peak EWMA of the fleet: the fresher one's when the other's last sample is older by
// more than MergeWithin, else the slower of the two. A slow sample on any replica thus takes
// the fleet's at once, as it takes its replica's, and a replica's newer samples supersede
// another's stale ones. (A mean weighted by samples did not: a target that had just slowed
// kept the fast mean of the many samples it had served fast on the other replicas until
// each of them had tried it, and was abandoned later than a target that had just been
// restored was re-adopted.)
func merge(a, b Digest) Digest {
	out := Digest{N: a.N + b.N, Fails: a.Fails + b.Fails, Total: a.Total + b.Total,
		P95: max(a.P95, b.P95), InFlight: a.InFlight + b.InFlight, Fresh: a.Fresh || b.Fresh,
		Cost: max(a.Cost, b.Cost), Last: max(a.Last, b.Last)}
	within := MergeWithin.Milliseconds()
	switch {
	case a.Last > b.Last+within:
		out.Cost = a.Cost
	case b.Last > a.Last+within:
		out.Cost = b.Cost
	}
	return out
}

func (d Digest) view() View {
	v := View{Latency: time.Duration(d.Cost * float64(time.Millisecond)), P95: time.Duration(d.P95 * float64(time.Millisecond)),
		InFlight: d.InFlight, Fresh: d.Fresh}
	if d.Total > 0 {
		v.ErrorRate = d.Fails / max(d.Total, MinSamples)
	}
	v.Weight = max(1-4*v.ErrorRate, MinWeight)
	return v
}

// Digests returns this replica's own digests of targets (what Share publishes).
func (m *Meter) Digests(targets []string) map[string]Digest {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]Digest, len(targets))
	for _, t := range targets {
		if _, ok := m.m[t]; ok {
			out[t] = m.local(t, now)
		}
	}
	return out
}

// SetFleet replaces the other replicas' digests, merged by target.
func (m *Meter) SetFleet(fleet map[string]Digest) {
	m.mu.Lock()
	m.fleet = fleet
	m.mu.Unlock()
}
