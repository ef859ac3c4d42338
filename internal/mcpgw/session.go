package mcpgw

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"
)

// Store keeps the sessions' state, by session id, as opaque bytes. Redis in a fleet
// (redisstore.MCPSessions), so that a session started on one replica is served by any;
// Memory for one replica. Implementations are safe for concurrent use.
type Store interface {
	// Put stores data under id for ttl.
	Put(ctx context.Context, id string, data []byte, ttl time.Duration) error
	// Get returns what id holds and extends its life to ttl; nil, nil: no such session.
	Get(ctx context.Context, id string, ttl time.Duration) ([]byte, error)
	// Delete forgets id (nothing when it is unknown).
	Delete(ctx context.Context, id string) error
}

// session is what a session carries between requests: whose key started it (a request of
// another key does not find it), and the version agreed.
type session struct {
	Key     string          `json:"key"` // the key's id; "" with auth off
	Version string          `json:"version"`
	Client  json.RawMessage `json:"client,omitempty"` // clientInfo, for logs
	Created time.Time       `json:"created"`
}

// newSessionID is 128 random bits, hex: visible ASCII, as the transport asks.
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Memory is a Store in this process. The zero value is ready; safe for concurrent use.
type Memory struct {
	mu sync.Mutex
	m  map[string]memEntry
}

type memEntry struct {
	data    []byte
	expires time.Time
}

var _ Store = (*Memory)(nil)

func (m *Memory) Put(_ context.Context, id string, data []byte, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if m.m == nil {
		m.m = map[string]memEntry{}
	}
	for k, e := range m.m { // sessions are few and started rarely: prune as they start
		if now.After(e.expires) {
			delete(m.m, k)
		}
	}
	m.m[id] = memEntry{data: data, expires: now.Add(ttl)}
	return nil
}

func (m *Memory) Get(_ context.Context, id string, ttl time.Duration) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[id]
	now := time.Now()
	if !ok || now.After(e.expires) {
		delete(m.m, id)
		return nil, nil
	}
	e.expires = now.Add(ttl)
	m.m[id] = e
	return e.data, nil
}

func (m *Memory) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, id)
	return nil
}
