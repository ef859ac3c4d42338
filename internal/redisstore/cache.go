package redisstore

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cache is the response cache's store in Redis (cache.Store): every replica reads the
// answers any of them stored. An entry is one string with its TTL (SET PX): Redis drops it
// when it expires. A failure is returned like every other (an llm.Unavailable error), and
// with the breaker open it costs nothing; the cache counts it as a miss.
type Cache struct{ s *Store }

// Cache returns the response cache's store.
func (s *Store) Cache() *Cache { return &Cache{s: s} }

// Get returns the value under key, or nil, nil when there is none.
func (c *Cache) Get(ctx context.Context, key string) ([]byte, error) {
	var b []byte
	err := c.s.retry(ctx, func(ctx context.Context) error {
		var err error
		b, err = c.s.c.Get(ctx, key).Bytes()
		return err
	})
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return b, err
}

// Clear deletes the keys that start with prefix: SCAN (never KEYS, which blocks Redis) and
// UNLINK in batches, each batch a call with its own timeout. On a cluster it scans every
// master, and unlinks key by key (pipelined): a batch's keys are in many slots.
func (c *Cache) Clear(ctx context.Context, prefix string) (int, error) {
	match := globEscape.Replace(prefix) + "*"
	cc, ok := c.s.c.(*redis.ClusterClient)
	if !ok {
		return c.clear(ctx, c.s.c, match, false)
	}
	var n atomic.Int64
	err := cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		k, err := c.clear(ctx, node, match, true)
		n.Add(int64(k))
		return err
	})
	if err != nil && !errors.Is(err, ErrUnavailable) {
		err = c.s.result(ctx, err)
	}
	return int(n.Load()), err
}

// clear is Clear on one node; each key is unlinked alone when one says so (a cluster's).
func (c *Cache) clear(ctx context.Context, node redis.Cmdable, match string, each bool) (int, error) {
	var cursor uint64
	n := 0
	for {
		var deleted int64
		err := c.s.call(ctx, func(ctx context.Context) error {
			keys, next, err := node.Scan(ctx, cursor, match, 1000).Result()
			cursor = next
			switch {
			case err != nil || len(keys) == 0:
			case !each:
				deleted, err = node.Unlink(ctx, keys...).Result()
			default:
				var cmds []*redis.IntCmd
				_, err = node.Pipelined(ctx, func(p redis.Pipeliner) error {
					for _, k := range keys {
						cmds = append(cmds, p.Unlink(ctx, k))
					}
					return nil
				})
				for _, cmd := range cmds {
					deleted += cmd.Val()
				}
			}
			return err
		})
		if err != nil {
			return n, err
		}
		n += int(deleted)
		if cursor == 0 {
			return n, nil
		}
	}
}

// globEscape quotes the characters SCAN MATCH would read as a pattern.
var globEscape = strings.NewReplacer("\\", "\\\\", "*", "\\*", "?", "\\?", "[", "\\[", "]", "\\]")

// Set stores val under key for ttl.
func (c *Cache) Set(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	return c.s.call(ctx, func(ctx context.Context) error { return c.s.c.Set(ctx, key, val, ttl).Err() })
}

// The flights of the response cache (cache.Board): a lock per cache key (a string with
// the leader's token and a lease, SET NX PX), and each leader's log, a stream the leader
// writes (XADD) and its followers on every replica read (XREAD BLOCK). Every call goes
// through the breaker: with Redis down a flight stays on its replica.

var flightClaimScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return ARGV[1] end
return redis.call('GET', KEYS[1]) or ''
`)

var flightRenewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`)

var flightReleaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

// Claim implements cache.Board.
func (c *Cache) Claim(ctx context.Context, lock, token string, lease time.Duration) (string, error) {
	var holder string
	err := c.s.retry(ctx, func(ctx context.Context) error { // run again, it finds its own token
		var err error
		holder, err = flightClaimScript.Run(ctx, c.s.c, []string{lock}, token, lease.Milliseconds()).Text()
		return err
	})
	return holder, err
}

// Renew implements cache.Board.
func (c *Cache) Renew(ctx context.Context, lock, token string, lease time.Duration) (bool, error) {
	var n int64
	err := c.s.retry(ctx, func(ctx context.Context) error {
		var err error
		n, err = flightRenewScript.Run(ctx, c.s.c, []string{lock}, token, lease.Milliseconds()).Int64()
		return err
	})
	return n == 1, err
}

// Release implements cache.Board.
func (c *Cache) Release(ctx context.Context, lock, token string) error {
	return c.s.retry(ctx, func(ctx context.Context) error {
		return flightReleaseScript.Run(ctx, c.s.c, []string{lock}, token).Err()
	})
}

// Holder implements cache.Board.
func (c *Cache) Holder(ctx context.Context, lock string) (string, error) {
	h, err := c.Get(ctx, lock)
	return string(h), err
}

// Append implements cache.Board: XADD and PEXPIRE in one transaction.
func (c *Cache) Append(ctx context.Context, log string, entry []byte, ttl time.Duration) error {
	return c.s.call(ctx, func(ctx context.Context) error {
		_, err := c.s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.XAdd(ctx, &redis.XAddArgs{Stream: log, Values: []any{"r", entry}})
			p.PExpire(ctx, log, ttl)
			return nil
		})
		return err
	})
}

// Read implements cache.Board. A read that waits holds a connection of the pool that long.
func (c *Cache) Read(ctx context.Context, log, after string, block time.Duration) ([][]byte, string, error) {
	var out [][]byte
	last := after
	a := &redis.XReadArgs{Streams: []string{log, after}, Count: 100, Block: -1}
	if block > 0 {
		a.Block = block
	}
	err := c.s.callFor(ctx, block+c.s.timeout, func(ctx context.Context) error {
		res, err := c.s.c.XRead(ctx, a).Result()
		for _, st := range res {
			for _, m := range st.Messages {
				if v, ok := m.Values["r"].(string); ok {
					out = append(out, []byte(v))
				}
				last = m.ID
			}
		}
		return err
	})
	if errors.Is(err, redis.Nil) {
		err = nil
	}
	return out, last, err
}
