package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// MCPSessions keeps the MCP gateway's sessions (package mcpgw's Store), one string key per
// session with its TTL, renewed on each read: any replica serves any request of a session.
type MCPSessions struct{ s *Store }

// MCPSessions returns the sessions' store.
func (s *Store) MCPSessions() *MCPSessions { return &MCPSessions{s: s} }

func mcpSessionKey(id string) string { return "sluice:mcp:session:" + id }

func (m *MCPSessions) Put(ctx context.Context, id string, data []byte, ttl time.Duration) error {
	return m.s.call(ctx, func(ctx context.Context) error {
		return m.s.c.Set(ctx, mcpSessionKey(id), data, ttl).Err()
	})
}

// Get reads the session and renews its TTL in one round trip (GETEX).
func (m *MCPSessions) Get(ctx context.Context, id string, ttl time.Duration) ([]byte, error) {
	var b []byte
	err := m.s.call(ctx, func(ctx context.Context) (err error) {
		b, err = m.s.c.GetEx(ctx, mcpSessionKey(id), ttl).Bytes()
		return err
	})
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return b, err
}

func (m *MCPSessions) Delete(ctx context.Context, id string) error {
	return m.s.call(ctx, func(ctx context.Context) error {
		return m.s.c.Del(ctx, mcpSessionKey(id)).Err()
	})
}
