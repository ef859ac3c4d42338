package redisstore

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sluice-gw/sluice/internal/fallback"
)

// Health is a fallback.Health in Redis: a cooldown one replica starts, every replica
// skips. The rules are fallback.Memory's (threshold, doubling cool-off with a cap,
// Retry-After, one half-open probe fleet-wide); the probe is a lease, so a replica that dies
// while probing cannot block the target for good. A short local cache answers the common
// case (a healthy target) without a round trip; a cooldown set elsewhere is seen within
// CacheTTL. When Redis cannot answer, whatever the policy, this replica's own fallback.Memory
// decides: health never refuses a request by itself.
type Health struct {
	s *Store
	// Threshold, CoolOff and MaxCoolOff are fallback.Memory's; zero: its defaults. Set the
	// fields before the first call.
	Threshold           int
	CoolOff, MaxCoolOff time.Duration
	// CacheTTL is how long an answer from Redis is reused (default 1s).
	CacheTTL time.Duration
	// ProbeLease bounds a half-open probe (default 10m, beyond any attempt's total timeout).
	ProbeLease time.Duration

	local     fallback.Memory
	localInit sync.Once
	mu        sync.Mutex
	cache     map[string]circuit
}

// circuit is what this replica last learned of a target.
type circuit struct {
	at    time.Time // when learned
	clean bool      // no failure on record
	until time.Time // cooling until (local clock); zero: not cooling
}

var _ fallback.Health = (*Health)(nil)

// Health returns the health store.
func (s *Store) Health() *Health {
	return &Health{s: s, CacheTTL: time.Second, ProbeLease: 10 * time.Minute, cache: map[string]circuit{}}
}

func healthKey(target string) string { return "sluice:{health:" + target + "}" }

// healthRetention keeps a target's record this long past its cooldown.
const healthRetention = 15 * time.Minute

// admitScript: KEYS: the target. ARGV: force (0|1), probe lease ms.
// Returns: admitted, cooldown left ms, state (0 clean, 1 failing, 2 cooling).
var admitScript = redis.NewScript(luaNow + `
local now = nowms()
local h = redis.call('HMGET', KEYS[1], 'fails', 'until', 'probe')
if not h[1] then return {1, 0, 0} end
local untl = tonumber(h[2] or '0')
if untl == 0 then return {1, 0, 1} end
local left = math.max(untl - now, 0)
if tonumber(h[3] or '0') > now or (ARGV[1] == '0' and left > 0) then return {0, left, 2} end
redis.call('HSET', KEYS[1], 'probe', now + tonumber(ARGV[2]))
return {1, 0, 2}
`)

// failureScript: KEYS: the target. ARGV: threshold, cool-off ms, max cool-off ms,
// Retry-After ms, retention ms. Returns the cooldown left in ms (0: not cooling).
var failureScript = redis.NewScript(luaNow + `
local now = nowms()
local threshold, base, cap, ra = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local fails = redis.call('HINCRBY', KEYS[1], 'fails', 1)
redis.call('HDEL', KEYS[1], 'probe')
local untl = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
local d = 0
-- a failure while cooling (a failed probe) cools again, below the threshold too
if fails >= threshold or untl > 0 then
  d = base
  local n = fails - threshold
  while n > 0 and d < cap do d = d * 2; n = n - 1 end
  d = math.min(d, cap)
end
if ra > 0 then d = math.max(d, math.min(ra, cap)) end
if d > 0 then
  untl = now + d
  redis.call('HSET', KEYS[1], 'until', untl)
end
redis.call('PEXPIRE', KEYS[1], math.max(untl - now, 0) + tonumber(ARGV[5]))
if untl == 0 then return 0 end
return math.max(untl - now, 0)
`)

// fallback is the local state used while Redis cannot answer, with the same rules.
func (h *Health) fallback() *fallback.Memory {
	h.localInit.Do(func() {
		h.local.Threshold, h.local.CoolOff, h.local.MaxCoolOff = h.Threshold, h.CoolOff, h.MaxCoolOff
	})
	return &h.local
}

func (h *Health) learn(target string, state int64, left time.Duration) {
	now := time.Now()
	c := circuit{at: now, clean: state == 0}
	if state == 2 {
		c.until = now.Add(left)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.cache) >= maxCached {
		clear(h.cache)
	}
	h.cache[target] = c
}

func (h *Health) cached(target string) (circuit, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.cache[target]
	return c, ok && time.Since(c.at) < h.CacheTTL
}

// coolingScript: KEYS: the target. Returns the cooldown left in ms (0: not cooling).
var coolingScript = redis.NewScript(luaNow + `
local untl = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if untl == 0 then return 0 end
return math.max(untl - nowms(), 0)
`)

// Cooling implements fallback.Watcher: read only, no probe is taken. With Redis
// unreachable, this replica's own view.
func (h *Health) Cooling(ctx context.Context, target string) time.Duration {
	var ms int64
	err := h.s.call(ctx, func(ctx context.Context) (err error) {
		ms, err = coolingScript.Run(ctx, h.s.c, []string{healthKey(target)}).Int64()
		return err
	})
	if err != nil {
		return h.fallback().Cooling(ctx, target)
	}
	return time.Duration(ms) * time.Millisecond
}

// Admit implements fallback.Health.
func (h *Health) Admit(ctx context.Context, target string, force bool) (bool, time.Duration) {
	if c, ok := h.cached(target); ok && !force {
		if c.until.IsZero() {
			return true, 0
		}
		if left := time.Until(c.until); left > 0 {
			return false, left
		}
	}
	var v []int64
	err := h.s.call(ctx, func(ctx context.Context) (err error) {
		f := 0
		if force {
			f = 1
		}
		v, err = admitScript.Run(ctx, h.s.c, []string{healthKey(target)}, f, h.ProbeLease.Milliseconds()).Int64Slice()
		return err
	})
	if err != nil {
		return h.fallback().Admit(ctx, target, force)
	}
	left := time.Duration(v[1]) * time.Millisecond
	if v[0] == 1 && v[2] == 2 {
		// This replica holds the probe: until its verdict, ask Redis again.
		h.learn(target, 2, 0)
	} else {
		h.learn(target, v[2], left)
	}
	return v[0] == 1, left
}

// Success implements fallback.Health. A target this replica knows to be clean costs no
// round trip: the common case, once per request.
func (h *Health) Success(ctx context.Context, target string) {
	if c, ok := h.cached(target); ok && c.clean {
		return
	}
	if h.s.call(ctx, func(ctx context.Context) error { return h.s.c.Del(ctx, healthKey(target)).Err() }) != nil {
		h.fallback().Success(ctx, target)
		return
	}
	h.learn(target, 0, 0)
}

// Failure implements fallback.Health.
func (h *Health) Failure(ctx context.Context, target string, retryAfter time.Duration) time.Duration {
	threshold, base, ceiling := h.Threshold, h.CoolOff, h.MaxCoolOff
	if threshold <= 0 {
		threshold = fallback.DefaultThreshold
	}
	if base <= 0 {
		base = fallback.DefaultCoolOff
	}
	if ceiling <= 0 {
		ceiling = fallback.DefaultMaxCoolOff
	}
	var ms int64
	err := h.s.call(ctx, func(ctx context.Context) (err error) {
		ms, err = failureScript.Run(ctx, h.s.c, []string{healthKey(target)}, threshold, base.Milliseconds(),
			ceiling.Milliseconds(), retryAfter.Milliseconds(), healthRetention.Milliseconds()).Int64()
		return err
	})
	if err != nil {
		return h.fallback().Failure(ctx, target, retryAfter)
	}
	left := time.Duration(ms) * time.Millisecond
	state := int64(1)
	if left > 0 {
		state = 2
	}
	h.learn(target, state, left)
	return left
}

// Release implements fallback.Health.
func (h *Health) Release(ctx context.Context, target string) {
	if h.s.call(ctx, func(ctx context.Context) error { return h.s.c.HDel(ctx, healthKey(target), "probe").Err() }) != nil {
		h.fallback().Release(ctx, target)
	}
	h.mu.Lock()
	delete(h.cache, target)
	h.mu.Unlock()
}
