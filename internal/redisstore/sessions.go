package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sluice-gw/sluice/internal/console"
)

// ConsoleSessions keeps the console's sessions (console.Store), one string per session with
// its TTL, so that any replica serves a session and a sign-out (DEL) ends it on all at once.
// Ids are digests of the cookies (the console hashes them): a dump of Redis holds no session
// a browser could present. There is no local fallback whatever redis.on_failure says: a
// session another replica may have ended cannot be trusted from memory, so while Redis is
// down Get fails and the console refuses (fail closed). Safe for concurrent use.
type ConsoleSessions struct{ s *Store }

var _ console.Store = (*ConsoleSessions)(nil)

// ConsoleSessions returns the console's session store on this Store's connection.
func (s *Store) ConsoleSessions() *ConsoleSessions { return &ConsoleSessions{s: s} }

// consoleSessionKey shares the {console} hash tag, like {keys} and {stats}: one slot for
// the few sessions of a fleet's operators.
func consoleSessionKey(id string) string { return "sluice:{console}:session:" + id }

func (c *ConsoleSessions) Put(ctx context.Context, id string, data []byte, ttl time.Duration) error {
	return c.s.call(ctx, func(ctx context.Context) error {
		return c.s.c.Set(ctx, consoleSessionKey(id), data, ttl).Err()
	})
}

// Get reads the session; its TTL is not renewed (a session ends at a fixed time).
func (c *ConsoleSessions) Get(ctx context.Context, id string) ([]byte, error) {
	var b []byte
	err := c.s.retry(ctx, func(ctx context.Context) (err error) {
		b, err = c.s.c.Get(ctx, consoleSessionKey(id)).Bytes()
		return err
	})
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return b, err
}

func (c *ConsoleSessions) Delete(ctx context.Context, id string) error {
	return c.s.call(ctx, func(ctx context.Context) error {
		return c.s.c.Del(ctx, consoleSessionKey(id)).Err()
	})
}
