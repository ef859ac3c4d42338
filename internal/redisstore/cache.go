package redisstore

import (
	"context"
	"errors"
	"strings"
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
	err := c.s.call(ctx, func(ctx context.Context) error {
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
// UNLINK in batches, each batch a call with its own timeout.
func (c *Cache) Clear(ctx context.Context, prefix string) (int, error) {
	match := globEscape.Replace(prefix) + "*"
	var cursor uint64
	n := 0
	for {
		var deleted int64
		err := c.s.call(ctx, func(ctx context.Context) error {
			keys, next, err := c.s.c.Scan(ctx, cursor, match, 1000).Result()
			if err == nil && len(keys) > 0 {
				deleted, err = c.s.c.Unlink(ctx, keys...).Result()
			}
			cursor = next
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
