package console

import (
	"context"
	"sync"
	"time"
)

// Store keeps sessions by id (the SHA-256 of the cookie's value, in hex: a copy of the store
// holds no cookie a browser could present), with an index of each user's sessions so that
// they end with the user. Data is opaque to the store. Implementations are safe for
// concurrent use: this package's MemoryStore, redisstore.ConsoleSessions.
type Store interface {
	// Put stores data under id for ttl, as a session of user ("": of no user, the
	// bootstrap admin's, in no index).
	Put(ctx context.Context, id, user string, data []byte, ttl time.Duration) error
	// Get returns what Put stored under id, or nil and no error when there is none (never
	// stored, deleted or expired).
	Get(ctx context.Context, id string) ([]byte, error)
	// Delete removes id; deleting what is not there is no error.
	Delete(ctx context.Context, id string) error
	// EndUser removes every session Put for user; a user with none is no error.
	EndUser(ctx context.Context, user string) error
}

// MemoryStore is a Store in this process: the default of one replica. Its entries expire
// at their TTL. Safe for concurrent use.
type MemoryStore struct {
	mu     sync.Mutex
	m      map[string]memEntry
	byUser map[string]map[string]struct{} // user -> the ids of their sessions
}

type memEntry struct {
	data []byte
	user string
	end  time.Time
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{m: map[string]memEntry{}, byUser: map[string]map[string]struct{}{}}
}

// Put stores a copy of data. It also drops the entries that expired: sign-ins are rare, so
// a sweep of the map at each keeps it bounded by the sessions alive, without a goroutine.
func (s *MemoryStore) Put(_ context.Context, id, user string, data []byte, ttl time.Duration) error {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, e := range s.m {
		if !now.Before(e.end) {
			s.remove(k)
		}
	}
	s.remove(id)
	s.m[id] = memEntry{data: append([]byte(nil), data...), user: user, end: now.Add(ttl)}
	if user != "" {
		if s.byUser[user] == nil {
			s.byUser[user] = map[string]struct{}{}
		}
		s.byUser[user][id] = struct{}{}
	}
	return nil
}

// remove deletes id and its place in its user's index; s.mu is held.
func (s *MemoryStore) remove(id string) {
	e, ok := s.m[id]
	if !ok {
		return
	}
	delete(s.m, id)
	if ids := s.byUser[e.user]; ids != nil {
		delete(ids, id)
		if len(ids) == 0 {
			delete(s.byUser, e.user)
		}
	}
}

func (s *MemoryStore) Get(_ context.Context, id string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[id]
	if !ok || !time.Now().Before(e.end) {
		return nil, nil
	}
	return append([]byte(nil), e.data...), nil
}

func (s *MemoryStore) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.remove(id)
	return nil
}

func (s *MemoryStore) EndUser(_ context.Context, user string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range s.byUser[user] {
		s.remove(id)
	}
	return nil
}

// Len is the number of entries held, expired ones not yet swept included.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}
