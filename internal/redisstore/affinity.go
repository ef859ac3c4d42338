package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sluice-gw/sluice/internal/fallback"
)

// Affinity is a fallback.Affinity in Redis: the member of a weighted group that serves a
// conversation, seen by every replica (issue 46). One string key per conversation and
// group, hash-tagged on its own (a Redis Cluster spreads the conversations over its slots):
//
//	sluice:{aff:<key>}   string  the target ("provider/model"), TTL: the affinity's life
//
// A turn costs one round trip, a script that renews the entry as it reads it, or, for a new
// conversation, remembers the member the chain picks for it; a SET follows only when the
// conversation moved. A failure is counted and logged like any (Store.call)
// and returned: the chain then picks without affinity, whatever redis.on_failure says, since
// losing a cache hit is no reason to refuse a request.
type Affinity struct{ s *Store }

var _ fallback.Affinity = (*Affinity)(nil)

// Affinity returns the affinity store.
func (s *Store) Affinity() *Affinity { return &Affinity{s: s} }

func affinityKey(key string) string { return "sluice:{aff:" + key + "}" }

// affinityGetScript is GETEX, or SET of the pick (ARGV[1], unless "") when there is nothing
// to get: one round trip either way. ARGV[2] is the TTL in milliseconds.
var affinityGetScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return v
end
if ARGV[1] ~= '' then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
return ''
`)

// Get implements fallback.Affinity.
func (a *Affinity) Get(ctx context.Context, key, pick string, ttl time.Duration) (string, error) {
	var target string
	err := a.s.retry(ctx, func(ctx context.Context) (err error) {
		target, err = affinityGetScript.Run(ctx, a.s.c, []string{affinityKey(key)}, pick, ttl.Milliseconds()).Text()
		return err
	})
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	return target, err
}

// Set implements fallback.Affinity. Safe to run twice: the same value.
func (a *Affinity) Set(ctx context.Context, key, target string, ttl time.Duration) error {
	return a.s.retry(ctx, func(ctx context.Context) error {
		return a.s.c.Set(ctx, affinityKey(key), target, ttl).Err()
	})
}
