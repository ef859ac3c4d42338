package auth

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
)

// Errors of a Store. Any other error means the store could not answer (Redis unreachable).
var (
	ErrNotFound = errors.New("no such key")
	ErrExists   = errors.New("a key with this id or hash exists")
	// ErrStatic is returned for changes to a key of the configuration file.
	ErrStatic = errors.New("the key is defined in the configuration file")
)

// Store holds the keys the admin API creates. Implementations are safe for concurrent use,
// and return copies or shared read-only values (see Key).
type Store interface {
	// Lookup finds a key by its hash: the hot path of every request.
	Lookup(ctx context.Context, hash string) (*Key, error)
	// Create stores k; ErrExists when its id or hash is taken.
	Create(ctx context.Context, k *Key) error
	// List returns every key, ordered by creation time then id.
	List(ctx context.Context) ([]*Key, error)
	Get(ctx context.Context, id string) (*Key, error)
	// Update applies fn to a copy of the key and stores the result atomically (no lost update
	// between replicas); an error from fn is returned as is. The id, hash and creation time
	// cannot change.
	Update(ctx context.Context, id string, fn func(*Key) error) (*Key, error)
	Delete(ctx context.Context, id string) error
}

// Memory is a Store kept in this process: one replica, no Redis. The zero value is ready.
type Memory struct {
	mu     sync.Mutex
	byID   map[string]*Key
	byHash map[string]*Key
}

var _ Store = (*Memory)(nil)

func (m *Memory) Lookup(_ context.Context, hash string) (*Key, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if k := m.byHash[hash]; k != nil {
		return k, nil
	}
	return nil, ErrNotFound
}

func (m *Memory) Create(_ context.Context, k *Key) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byID == nil {
		m.byID, m.byHash = map[string]*Key{}, map[string]*Key{}
	}
	if m.byID[k.ID] != nil || m.byHash[k.Hash] != nil {
		return ErrExists
	}
	k = k.Clone()
	m.byID[k.ID], m.byHash[k.Hash] = k, k
	return nil
}

func (m *Memory) List(context.Context) ([]*Key, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ks := make([]*Key, 0, len(m.byID))
	for _, k := range m.byID {
		ks = append(ks, k)
	}
	SortKeys(ks)
	return ks, nil
}

func (m *Memory) Get(_ context.Context, id string) (*Key, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if k := m.byID[id]; k != nil {
		return k, nil
	}
	return nil, ErrNotFound
}

func (m *Memory) Update(_ context.Context, id string, fn func(*Key) error) (*Key, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.byID[id]
	if old == nil {
		return nil, ErrNotFound
	}
	k := old.Clone()
	if err := fn(k); err != nil {
		return nil, err
	}
	k.ID, k.Hash, k.CreatedAt = old.ID, old.Hash, old.CreatedAt
	// Replace rather than modify: readers may hold the old value.
	m.byID[id], m.byHash[k.Hash] = k, k
	return k, nil
}

func (m *Memory) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := m.byID[id]
	if k == nil {
		return ErrNotFound
	}
	delete(m.byID, id)
	delete(m.byHash, k.Hash)
	return nil
}

// SortKeys orders keys by creation time, then id: the order List returns.
func SortKeys(ks []*Key) {
	slices.SortFunc(ks, func(a, b *Key) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
