package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sluice-gw/sluice/internal/auth"
)

const (
	keysByHash = "sluice:{keys}:by-hash"
	keysByID   = "sluice:{keys}:by-id"
	// maxCached bounds the lookup cache; past it, the cache starts over.
	maxCached = 10_000
)

// Keys is an auth.Store in Redis with a short local cache in front of Lookup, the hot
// path. A key deleted or changed on one replica is seen by the others within CacheTTL.
// Under redis.on_failure: open, a key this replica looked up within StaleTTL still
// authenticates while Redis is down; a key it never saw cannot be checked and is refused.
type Keys struct {
	s *Store
	// CacheTTL is how long a looked-up key is used without asking Redis (default 2s).
	CacheTTL time.Duration
	// StaleTTL is how long a cached key may serve while Redis is down, open policy only
	// (default 10m).
	StaleTTL time.Duration

	mu    sync.Mutex
	cache map[string]cachedKey
}

type cachedKey struct {
	k  *auth.Key
	at time.Time
}

var _ auth.Store = (*Keys)(nil)

// Keys returns the key store.
func (s *Store) Keys() *Keys {
	return &Keys{s: s, CacheTTL: 2 * time.Second, StaleTTL: 10 * time.Minute, cache: map[string]cachedKey{}}
}

func (ks *Keys) cached(hash string) (cachedKey, bool) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	c, ok := ks.cache[hash]
	return c, ok
}

func (ks *Keys) remember(hash string, k *auth.Key) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if k == nil {
		delete(ks.cache, hash)
		return
	}
	if len(ks.cache) >= maxCached {
		clear(ks.cache)
	}
	ks.cache[hash] = cachedKey{k: k, at: time.Now()}
}

// Lookup implements auth.Store.
func (ks *Keys) Lookup(ctx context.Context, hash string) (*auth.Key, error) {
	c, ok := ks.cached(hash)
	// Under closed, a known outage skips the cache: refusing is the point of the policy.
	if ok && time.Since(c.at) < ks.CacheTTL && (ks.s.open || !ks.s.isDown()) {
		return c.k, nil
	}
	var rec string
	err := ks.s.retry(ctx, func(ctx context.Context) (err error) {
		rec, err = ks.s.c.HGet(ctx, keysByHash, hash).Result()
		return err
	})
	switch {
	case errors.Is(err, redis.Nil):
		ks.remember(hash, nil)
		return nil, auth.ErrNotFound
	case err != nil:
		if ks.s.open && ok && time.Since(c.at) < ks.StaleTTL && errors.Is(err, ErrUnavailable) {
			return c.k, nil
		}
		return nil, err
	}
	k, err := decodeKey(rec)
	if err != nil {
		return nil, err
	}
	ks.remember(hash, k)
	return k, nil
}

func decodeKey(rec string) (*auth.Key, error) {
	k := &auth.Key{}
	if err := json.Unmarshal([]byte(rec), k); err != nil {
		return nil, fmt.Errorf("redisstore: a key record does not decode: %w", err)
	}
	return k, nil
}

// Create implements auth.Store.
func (ks *Keys) Create(ctx context.Context, k *auth.Key) error {
	rec, err := json.Marshal(k)
	if err != nil {
		return err
	}
	var n int64
	err = ks.s.call(ctx, func(ctx context.Context) (err error) {
		n, err = createKeyScript.Run(ctx, ks.s.c, []string{keysByID, keysByHash}, k.ID, k.Hash, rec).Int64()
		return err
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return auth.ErrExists
	}
	return nil
}

// List implements auth.Store.
func (ks *Keys) List(ctx context.Context) ([]*auth.Key, error) {
	out, err := records(ctx, ks.s, keysByHash, decodeKey)
	auth.SortKeys(out)
	return out, err
}

// records decodes every record of the hash (the keys', the teams').
func records[T any](ctx context.Context, s *Store, hash string, decode func(string) (T, error)) ([]T, error) {
	var recs []string
	err := s.retry(ctx, func(ctx context.Context) (err error) {
		recs, err = s.c.HVals(ctx, hash).Result()
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(recs))
	for _, rec := range recs {
		v, err := decode(rec)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// get returns the record of id as stored, and decoded.
func (ks *Keys) get(ctx context.Context, id string) (string, *auth.Key, error) {
	var rec string
	err := ks.s.retry(ctx, func(ctx context.Context) (err error) {
		rec, err = getKeyScript.Run(ctx, ks.s.c, []string{keysByID, keysByHash}, id).Text()
		return err
	})
	if errors.Is(err, redis.Nil) {
		return "", nil, auth.ErrNotFound
	} else if err != nil {
		return "", nil, err
	}
	k, err := decodeKey(rec)
	return rec, k, err
}

// Get implements auth.Store.
func (ks *Keys) Get(ctx context.Context, id string) (*auth.Key, error) {
	_, k, err := ks.get(ctx, id)
	return k, err
}

// Update implements auth.Store: read, apply fn, write if nobody wrote meanwhile, else again
// (casUpdate). The id, hash and creation time stay as they were.
func (ks *Keys) Update(ctx context.Context, id string, fn func(*auth.Key) error) (*auth.Key, error) {
	k, err := casUpdate(ctx, ks.s, updateKeyScript, []string{keysByID, keysByHash}, id, ks.get, func(k *auth.Key) error {
		id, hash, created := k.ID, k.Hash, k.CreatedAt
		if err := fn(k); err != nil {
			return err
		}
		k.ID, k.Hash, k.CreatedAt = id, hash, created
		return nil
	}, auth.ErrNotFound, "key")
	if err != nil {
		return nil, err
	}
	ks.remember(k.Hash, nil)
	return k, nil
}

// Delete implements auth.Store. The key's limit logs expire on their own.
func (ks *Keys) Delete(ctx context.Context, id string) error {
	var hash string
	err := ks.s.call(ctx, func(ctx context.Context) (err error) {
		hash, err = deleteKeyScript.Run(ctx, ks.s.c, []string{keysByID, keysByHash}, id).Text()
		return err
	})
	if errors.Is(err, redis.Nil) {
		return auth.ErrNotFound
	} else if err != nil {
		return err
	}
	ks.remember(hash, nil)
	return nil
}
