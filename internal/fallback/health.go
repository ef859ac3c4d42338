package fallback

import (
	"context"
	"sync"
	"time"
)

// Health is the circuit state of targets, keyed by "provider/model": consecutive failures put
// a target in cooldown, and after the cool-off one half-open probe decides whether it is back.
// Implementations are safe for concurrent use; Memory keeps the state of one replica, a shared
// store (Redis) keeps it for a fleet. ctx bounds a call to a remote store, never the verdict:
// the chain passes a context that outlives a client who left.
type Health interface {
	// Admit reports whether target may be called now. A target that is not cooling is
	// admitted. A cooling target is admitted once its cool-off has ended (or at once when
	// force is set: the all-cooling rule) if no other probe is in flight: the caller then
	// holds the half-open probe until it reports Success, Failure or Release. When the target
	// is not admitted, left is what remains of its cooldown (0 when only the probe in flight
	// holds it back). Durations rather than instants: a shared store and this replica need not
	// agree on the time.
	Admit(ctx context.Context, target string, force bool) (ok bool, left time.Duration)
	// Success reports an answer that ended well: the failures are forgotten.
	Success(ctx context.Context, target string)
	// Failure reports a failure of the target; retryAfter is what the upstream asked for
	// (0: nothing). It returns what remains of the target's cooldown, 0 when not cooling.
	Failure(ctx context.Context, target string, retryAfter time.Duration) (left time.Duration)
	// Release gives a probe back with no verdict: the client left, or the request was
	// refused as invalid, which says nothing about the target.
	Release(ctx context.Context, target string)
}

// Health defaults (DESIGN §3): three failures in a row put a target in cooldown for 5 s,
// doubling with each failure after that (a failed probe included), up to 5 min.
const (
	DefaultThreshold  = 3
	DefaultCoolOff    = 5 * time.Second
	DefaultMaxCoolOff = 5 * time.Minute
)

// Watcher is a Health that tells what remains of a target's cooldown (0: not cooling)
// without taking its probe: what an operator's view of the targets reads.
type Watcher interface {
	Cooling(ctx context.Context, target string) time.Duration
}

// Memory is a Health kept in this process. The zero value uses the defaults and the real
// clock. Safe for concurrent use.
type Memory struct {
	// Threshold is the number of consecutive failures that starts a cooldown.
	Threshold int
	// CoolOff is the first cooldown; each later failure doubles it, up to MaxCoolOff. An
	// upstream's Retry-After starts a cooldown of that length at once (capped by MaxCoolOff),
	// whatever the count, and is never shortened by the backoff.
	CoolOff, MaxCoolOff time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time

	mu sync.Mutex
	m  map[string]*circuit
}

var _ Health = (*Memory)(nil)

type circuit struct {
	fails   int
	until   time.Time // zero: closed (not cooling)
	probing bool
}

func (m *Memory) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func (m *Memory) get(target string) *circuit {
	if m.m == nil {
		m.m = map[string]*circuit{}
	}
	c := m.m[target]
	if c == nil {
		c = &circuit{}
		m.m[target] = c
	}
	return c
}

// Cooling implements Watcher.
func (m *Memory) Cooling(_ context.Context, target string) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.m[target]; c != nil && !c.until.IsZero() {
		return max(c.until.Sub(m.now()), 0)
	}
	return 0
}

// Admit implements Health.
func (m *Memory) Admit(_ context.Context, target string, force bool) (bool, time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.m[target]
	if c == nil || c.until.IsZero() {
		return true, 0
	}
	left := max(c.until.Sub(m.now()), 0)
	if c.probing || (!force && left > 0) {
		return false, left
	}
	c.probing = true
	return true, 0
}

// Success implements Health.
func (m *Memory) Success(_ context.Context, target string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, target)
}

// Failure implements Health.
func (m *Memory) Failure(_ context.Context, target string, retryAfter time.Duration) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	threshold, base, ceiling := m.Threshold, m.CoolOff, m.MaxCoolOff
	if threshold <= 0 {
		threshold = DefaultThreshold
	}
	if base <= 0 {
		base = DefaultCoolOff
	}
	if ceiling <= 0 {
		ceiling = DefaultMaxCoolOff
	}
	c := m.get(target)
	c.fails++
	c.probing = false
	var d time.Duration
	// A failure while cooling (a failed probe) re-cools even below the threshold: the
	// cooldown a Retry-After started must not end in a closed circuit.
	if c.fails >= threshold || !c.until.IsZero() {
		d = base
		for n := c.fails - threshold; n > 0 && d < ceiling; n-- {
			d *= 2
		}
		d = min(d, ceiling)
	}
	if retryAfter > 0 {
		d = max(d, min(retryAfter, ceiling))
	}
	if d > 0 {
		c.until = m.now().Add(d)
	}
	if c.until.IsZero() {
		return 0
	}
	return max(c.until.Sub(m.now()), 0)
}

// Release implements Health.
func (m *Memory) Release(_ context.Context, target string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.m[target]; c != nil {
		c.probing = false
	}
}
