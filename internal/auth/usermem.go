package auth

import (
	"context"
	"slices"
	"strings"
	"sync"
)

// UserMemory is a Users store kept in this process: one replica, no Redis. The zero value
// is ready.
type UserMemory struct {
	mu     sync.Mutex
	users  map[string]*User
	tokens map[string]*UserToken // by hash
}

var _ Users = (*UserMemory)(nil)

func (m *UserMemory) init() {
	if m.users == nil {
		m.users, m.tokens = map[string]*User{}, map[string]*UserToken{}
	}
}

func (m *UserMemory) CreateUser(_ context.Context, u *User) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	if m.users[u.ID] != nil {
		return ErrExists
	}
	m.users[u.ID] = u.Clone()
	return nil
}

func (m *UserMemory) User(_ context.Context, id string) (*User, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if u := m.users[id]; u != nil {
		return u, nil
	}
	return nil, ErrNoUser
}

func (m *UserMemory) ListUsers(context.Context) ([]*User, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	us := make([]*User, 0, len(m.users))
	for _, u := range m.users {
		us = append(us, u)
	}
	SortUsers(us)
	return us, nil
}

func (m *UserMemory) UpdateUser(_ context.Context, id string, fn func(*User) error) (*User, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.users[id]
	if old == nil {
		return nil, ErrNoUser
	}
	u := old.Clone()
	if err := fn(u); err != nil {
		return nil, err
	}
	u.ID, u.Source, u.CreatedAt = old.ID, old.Source, old.CreatedAt
	m.users[id] = u // replace: readers may hold the old value
	return u, nil
}

func (m *UserMemory) DeleteUser(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.users[id] == nil {
		return ErrNoUser
	}
	delete(m.users, id)
	for h, t := range m.tokens {
		if t.User == id {
			delete(m.tokens, h)
		}
	}
	return nil
}

func (m *UserMemory) CreateToken(_ context.Context, t *UserToken) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	if m.users[t.User] == nil {
		return ErrNoUser
	}
	if m.tokens[t.Hash] != nil {
		return ErrExists
	}
	c := *t
	m.tokens[t.Hash] = &c
	return nil
}

func (m *UserMemory) Tokens(_ context.Context, user string) ([]*UserToken, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ts []*UserToken
	for _, t := range m.tokens {
		if t.User == user {
			ts = append(ts, t)
		}
	}
	SortTokens(ts)
	return ts, nil
}

func (m *UserMemory) DeleteToken(_ context.Context, user, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for h, t := range m.tokens {
		if t.User == user && t.ID == id {
			delete(m.tokens, h)
			return nil
		}
	}
	return ErrNotFound
}

func (m *UserMemory) TokenByHash(_ context.Context, hash string) (*UserToken, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.tokens[hash]; t != nil {
		return t, nil
	}
	return nil, ErrNotFound
}

// SortTokens orders tokens by creation time, then id.
func SortTokens(ts []*UserToken) {
	slices.SortFunc(ts, func(a, b *UserToken) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
