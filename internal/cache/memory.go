package cache

import (
	"container/list"
	"context"
	"strings"
	"sync"
	"time"
)

// DefaultMemoryBytes bounds the in-memory store when nothing else is said.
const DefaultMemoryBytes = 64 << 20

// Memory is a Store in this process: least recently used entries go first once the bytes
// held pass MaxBytes; an entry past its TTL is a miss and is dropped when met. For one
// replica (no Redis). Safe for concurrent use; the zero value holds DefaultMemoryBytes.
type Memory struct {
	MaxBytes int
	// Now is the clock (nil: time.Now).
	Now func() time.Time

	mu        sync.Mutex
	lru       list.List // of *memEntry, most recent first
	byKey     map[string]*list.Element
	size      int
	evictions int64
}

type memEntry struct {
	key     string
	val     []byte
	expires time.Time
}

var _ Store = (*Memory)(nil)

func (m *Memory) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el := m.byKey[key]
	if el == nil {
		return nil, nil
	}
	e := el.Value.(*memEntry)
	if !m.now().Before(e.expires) {
		m.remove(el)
		return nil, nil
	}
	m.lru.MoveToFront(el)
	return e.val, nil
}

// Set implements Store. A value larger than the whole store is not kept.
func (m *Memory) Set(_ context.Context, key string, val []byte, ttl time.Duration) error {
	m.set(key, val, ttl)
	return nil
}

// set is Set; it returns how many entries the bound pushed out.
func (m *Memory) set(key string, val []byte, ttl time.Duration) int {
	n, _ := m.put(key, val, ttl, false)
	return n
}

// Add keeps val under key for ttl unless a live entry holds key, and reports whether it
// did (the gateway's stored responses, dialect.Store). A value larger than the whole store
// is not kept.
func (m *Memory) Add(_ context.Context, key string, val []byte, ttl time.Duration) (bool, error) {
	_, added := m.put(key, val, ttl, true)
	return added, nil
}

// Delete forgets key and reports whether a live entry held it (dialect.Store).
func (m *Memory) Delete(_ context.Context, key string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el := m.byKey[key]
	if el == nil {
		return false, nil
	}
	live := m.now().Before(el.Value.(*memEntry).expires)
	m.remove(el)
	return live, nil
}

// put keeps val under key (only if no live entry holds it, when absent is set); it returns
// how many entries the bound pushed out, and whether val was kept.
func (m *Memory) put(key string, val []byte, ttl time.Duration, absent bool) (int, bool) {
	limit := m.MaxBytes
	if limit <= 0 {
		limit = DefaultMemoryBytes
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byKey == nil {
		m.byKey = map[string]*list.Element{}
	}
	if el := m.byKey[key]; el != nil {
		if absent && m.now().Before(el.Value.(*memEntry).expires) {
			return 0, false
		}
		m.remove(el)
	}
	if len(val) > limit || ttl <= 0 {
		return 0, false
	}
	m.byKey[key] = m.lru.PushFront(&memEntry{key: key, val: val, expires: m.now().Add(ttl)})
	m.size += len(val)
	n := 0
	for ; m.size > limit; n++ {
		m.remove(m.lru.Back())
	}
	m.evictions += int64(n)
	return n, true
}

func (m *Memory) remove(el *list.Element) {
	e := m.lru.Remove(el).(*memEntry)
	delete(m.byKey, e.key)
	m.size -= len(e.val)
}

// Clear implements Store.
func (m *Memory) Clear(_ context.Context, prefix string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for k, el := range m.byKey {
		if strings.HasPrefix(k, prefix) {
			m.remove(el)
			n++
		}
	}
	return n, nil
}

// Len is the number of entries held and their bytes; Evictions how many were pushed out by
// the bound.
func (m *Memory) Len() (n, bytes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lru.Len(), m.size
}

// Evictions is how many entries the bound pushed out.
func (m *Memory) Evictions() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.evictions
}
