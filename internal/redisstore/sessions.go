package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sluice-gw/sluice/internal/console"
)

// ConsoleSessions keeps the console's sessions (console.Store), one string per session with
// its TTL, so that any replica serves a session and a sign-out (DEL) ends it on all at once;
// a sorted set per user indexes their sessions, so that deleting the user, or changing their role,
// ends them all (EndUser). Ids are digests of the cookies (the console hashes them): a dump
// of Redis holds no session a browser could present. There is no local fallback whatever
// redis.on_failure says: a session another replica may have ended cannot be trusted from
// memory, so while Redis is down Get fails and the console refuses (fail closed). Safe for
// concurrent use.
type ConsoleSessions struct{ s *Store }

var _ console.Store = (*ConsoleSessions)(nil)

// ConsoleSessions returns the console's session store on this Store's connection.
func (s *Store) ConsoleSessions() *ConsoleSessions { return &ConsoleSessions{s: s} }

// The sessions and the users' indexes share the {console} hash tag, like {keys} and
// {stats}: one slot for the few sessions of a fleet's operators, so a session and its index
// are written by one script, and a user's sessions deleted in one transaction.
func consoleSessionKey(id string) string { return "sluice:{console}:session:" + id }

func consoleUserKey(user string) string { return "sluice:{console}:user:" + user }

// putSessionScript stores a session and adds it to its user's index (a sorted set of ids by
// the end of their sessions in ms), which lives as long as the longest session in it. The
// ids whose sessions are past their end leave the index at the next Put (one signed out
// before stays until then: EndUser deleting it again is harmless).
// KEYS: the session, the user's index. ARGV: the session's data, its TTL in ms, its id.
var putSessionScript = redis.NewScript(luaNow + `
local now, ttl = nowms(), tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[3])
if redis.call('PTTL', KEYS[2]) < ttl then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1
`)

func (c *ConsoleSessions) Put(ctx context.Context, id, user string, data []byte, ttl time.Duration) error {
	return c.s.call(ctx, func(ctx context.Context) error {
		if user == "" {
			return c.s.c.Set(ctx, consoleSessionKey(id), data, ttl).Err()
		}
		keys := []string{consoleSessionKey(id), consoleUserKey(user)}
		return putSessionScript.Run(ctx, c.s.c, keys, data, ttl.Milliseconds(), id).Err()
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

// EndUser deletes the sessions in user's index and removes them from it, in one
// transaction (MULTI in the {console} slot). A session Put between the read of the index
// and the transaction stays: it was made after the change that ends the others, and the
// console checks every session against its user at every call anyway.
func (c *ConsoleSessions) EndUser(ctx context.Context, user string) error {
	index := consoleUserKey(user)
	var ids []string
	err := c.s.retry(ctx, func(ctx context.Context) (err error) {
		ids, err = c.s.c.ZRange(ctx, index, 0, -1).Result()
		return err
	})
	if err != nil || len(ids) == 0 {
		return err
	}
	keys, members := make([]string, len(ids)), make([]any, len(ids))
	for i, id := range ids {
		keys[i], members[i] = consoleSessionKey(id), id
	}
	return c.s.retry(ctx, func(ctx context.Context) error {
		_, err := c.s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, keys...)
			p.ZRem(ctx, index, members...)
			return nil
		})
		return err
	})
}
