package auth

import (
	"context"
	"errors"
	"time"
)

// Errors of Authenticate, besides a Store's failure.
var (
	ErrMissing = errors.New("no API key")
	ErrInvalid = errors.New("invalid API key")
	ErrExpired = errors.New("the API key has expired")
)

// Refused reports whether err is the caller's fault (ErrMissing, ErrInvalid, ErrExpired),
// not a store's failure.
func Refused(err error) bool {
	return errors.Is(err, ErrMissing) || errors.Is(err, ErrInvalid) || errors.Is(err, ErrExpired)
}

// Keys resolves a caller's key: the configuration file's keys first (static, never in the
// store), then the Store. Safe for concurrent use; read-only once built.
type Keys struct {
	static map[string]*Key // by hash
	byID   map[string]*Key
	order  []*Key
	store  Store
}

// NewKeys returns Keys over the file's keys (marked Static) and store.
func NewKeys(static []*Key, store Store) *Keys {
	ks := &Keys{static: map[string]*Key{}, byID: map[string]*Key{}, store: store}
	for _, k := range static {
		k = k.Clone()
		k.Static = true
		ks.static[k.Hash], ks.byID[k.ID] = k, k
		ks.order = append(ks.order, k)
	}
	return ks
}

// Store is the store of the keys the admin API manages.
func (ks *Keys) Store() Store { return ks.store }

// Authenticate returns the key whose secret this is. ErrMissing, ErrInvalid and ErrExpired
// are the caller's fault; any other error is the store's.
func (ks *Keys) Authenticate(ctx context.Context, secret string, now time.Time) (*Key, error) {
	if secret == "" {
		return nil, ErrMissing
	}
	h := Hash(secret)
	k := ks.static[h]
	if k == nil {
		var err error
		if k, err = ks.store.Lookup(ctx, h); errors.Is(err, ErrNotFound) {
			return nil, ErrInvalid
		} else if err != nil {
			return nil, err
		}
	}
	if k.Expired(now) {
		return nil, ErrExpired
	}
	return k, nil
}

// List returns the file's keys, in file order, then the store's.
func (ks *Keys) List(ctx context.Context) ([]*Key, error) {
	stored, err := ks.store.List(ctx)
	if err != nil {
		return nil, err
	}
	return append(append([]*Key(nil), ks.order...), stored...), nil
}

// Get returns the key with this id, from the file or the store.
func (ks *Keys) Get(ctx context.Context, id string) (*Key, error) {
	if k := ks.byID[id]; k != nil {
		return k, nil
	}
	return ks.store.Get(ctx, id)
}

// Update changes a stored key; ErrStatic for a key of the file.
func (ks *Keys) Update(ctx context.Context, id string, fn func(*Key) error) (*Key, error) {
	if ks.byID[id] != nil {
		return nil, ErrStatic
	}
	return ks.store.Update(ctx, id, fn)
}

// Delete removes a stored key; ErrStatic for a key of the file.
func (ks *Keys) Delete(ctx context.Context, id string) error {
	if ks.byID[id] != nil {
		return ErrStatic
	}
	return ks.store.Delete(ctx, id)
}

// Create stores a new key; ErrExists when a key of the file has its hash.
func (ks *Keys) Create(ctx context.Context, k *Key) error {
	if ks.static[k.Hash] != nil || ks.byID[k.ID] != nil {
		return ErrExists
	}
	return ks.store.Create(ctx, k)
}
