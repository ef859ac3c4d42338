package redisstore

import (
	"context"
	"errors"
	"io"
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
	err := m.s.retry(ctx, func(ctx context.Context) (err error) {
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

// MCPCancels carries the MCP gateway's cancellations between replicas (mcpgw.Bus) on one
// pub/sub channel: a notifications/cancelled that reached a replica which does not run the
// call is published, and the replica that runs it cancels it. On a cluster the channel is
// sharded (SPUBLISH, SSUBSCRIBE): a message goes to the nodes of the channel's slot only,
// not to every node of the cluster as a plain PUBLISH does.
type MCPCancels struct{ s *Store }

// MCPCancels returns the cancellations' channel.
func (s *Store) MCPCancels() *MCPCancels { return &MCPCancels{s: s} }

const mcpCancelChannel = "sluice:mcp:cancel"

func (m *MCPCancels) Publish(ctx context.Context, msg string) error {
	return m.s.call(ctx, func(ctx context.Context) error {
		if m.s.form == formCluster {
			return m.s.c.SPublish(ctx, mcpCancelChannel, msg).Err()
		}
		return m.s.c.Publish(ctx, mcpCancelChannel, msg).Err()
	})
}

// Subscribe waits (up to the store's timeout) for Redis to confirm the subscription, then
// hands every message to fn on a goroutine of its own, until Close. The subscription has its
// own connection, which go-redis opens again after a failure.
func (m *MCPCancels) Subscribe(ctx context.Context, fn func(string)) (io.Closer, error) {
	var ps *redis.PubSub
	if m.s.form == formCluster {
		ps = m.s.c.SSubscribe(ctx, mcpCancelChannel)
	} else {
		ps = m.s.c.Subscribe(ctx, mcpCancelChannel)
	}
	cctx, cancel := context.WithTimeout(ctx, m.s.timeout)
	_, err := ps.Receive(cctx) // the subscription's confirmation
	cancel()
	sub := &subscription{ps: ps, done: make(chan struct{})}
	ch := ps.Channel()
	go func() {
		defer close(sub.done)
		for msg := range ch { // closed by ps.Close
			fn(msg.Payload)
		}
	}()
	return sub, err
}

// subscription is a running Subscribe; Close ends it and waits for its goroutine.
type subscription struct {
	ps   *redis.PubSub
	done chan struct{}
}

func (s *subscription) Close() error {
	err := s.ps.Close()
	<-s.done
	return err
}
