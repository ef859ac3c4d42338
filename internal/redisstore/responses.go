package redisstore

import (
	"context"
	"time"
)

// Responses keeps the gateway's stored responses (the Responses API's store: true, read by
// a previous_response_id, GET and DELETE /v1/responses/{id}) for every replica: one string
// per response, its record as the responses wire wrote it, with the alias's ttl (SET NX PX:
// Redis drops it when it expires). Each call touches one key, hash-tagged by the response
// id, so each stays in one slot of a Redis Cluster. A failure is an llm.Unavailable error,
// as for every other call of the store.
type Responses struct{ c Cache }

// Responses returns the stored responses' store (dialect.Store).
func (s *Store) Responses() *Responses { return &Responses{c: Cache{s: s}} }

func responseKey(id string) string { return "sluice:{resp:" + id + "}" }

// Get returns the record of id, or nil, nil when there is none.
func (r *Responses) Get(ctx context.Context, id string) ([]byte, error) {
	return r.c.Get(ctx, responseKey(id))
}

// Add keeps val under id for ttl unless id is kept already: false then, and the first stays.
func (r *Responses) Add(ctx context.Context, id string, val []byte, ttl time.Duration) (bool, error) {
	var ok bool
	err := r.c.s.call(ctx, func(ctx context.Context) (err error) {
		ok, err = r.c.s.c.SetNX(ctx, responseKey(id), val, ttl).Result()
		return err
	})
	return ok, err
}

// Delete forgets id and reports whether it was kept.
func (r *Responses) Delete(ctx context.Context, id string) (bool, error) {
	var n int64
	err := r.c.s.call(ctx, func(ctx context.Context) (err error) {
		n, err = r.c.s.c.Del(ctx, responseKey(id)).Result()
		return err
	})
	return n > 0, err
}
