package cache

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Policy is an alias's cache (config `models.<alias>.cache`).
type Policy struct {
	TTL time.Duration
	// MaxEntryBytes bounds a stored entry; a larger answer is served and not stored.
	MaxEntryBytes int
	Scope         Scope
	// Nondeterministic caches requests with a temperature above 0 and no seed too.
	Nondeterministic bool
	// ClientBypass lets a client skip the cache with Cache-Control: no-cache (read and
	// store afresh) or no-store (neither read nor store).
	ClientBypass bool
}

// Store keeps encoded entries for a time. Get returns nil, nil for a miss. An error is a
// failure to reach the store: the cache counts it as a miss. Implementations must be safe
// for concurrent use.
type Store interface {
	Get(ctx context.Context, key string) ([]byte, error)
	Set(ctx context.Context, key string, val []byte, ttl time.Duration) error
	// Clear deletes every entry whose key starts with prefix and returns how many.
	Clear(ctx context.Context, prefix string) (int, error)
}

// Cache is the response cache of the gateway: one Store for every alias. Safe for
// concurrent use.
type Cache struct {
	Store Store
	// Now is the clock (nil: time.Now).
	Now func() time.Time

	// Board, when set, coalesces identical misses across the replicas that share it
	// (board.go); nil: on this replica only.
	Board Board
	// Lease is a leader's hold of its key on the Board (0: DefaultLease).
	Lease time.Duration

	flights flights       // flight.go
	pumps   chan struct{} // board.go: the reads of another replica's leader in progress
	left    atomic.Int64  // leaders whose client left (Fill.Context)
}

func (c *Cache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Age is how long ago e was stored, in whole seconds, by the cache's clock.
func (c *Cache) Age(e *Entry) int64 { return e.Age(c.now()) }

// Cacheable reports whether p may serve req from the cache and store its answer: not a
// nondeterministic request the alias does not cache, not one whose answer the upstream
// keeps (store: true, which a later previous_response_id needs to find there).
func (p Policy) Cacheable(req *llm.Request) bool {
	if req.Store != nil && *req.Store {
		return false
	}
	return p.Nondeterministic || Deterministic(req)
}

// Get returns the entry stored under key, or nil: a miss, a store that failed, an entry
// that does not decode.
func (c *Cache) Get(ctx context.Context, alias, key string) *Entry {
	b, err := c.Store.Get(ctx, storeKey(alias, key))
	if err != nil || b == nil {
		return nil
	}
	e, err := decode(b)
	if err != nil {
		return nil
	}
	return e
}

// Entry is the answer a round gave, to be stored and shared, or nil when it may not be
// given again (see storable) or grew past p.MaxEntryBytes: rec is what the client's sink
// received, resp the complete response, model the served model name.
func (c *Cache) Entry(p Policy, rec *Recorder, model string, resp *llm.Response) *Entry {
	if rec == nil || rec.Over() || !storable(resp) {
		return nil
	}
	return &Entry{Model: model, Target: resp.Target, Events: rec.evs, Response: given(resp), Stored: c.now()}
}

// Put stores e under key when its encoding fits p.MaxEntryBytes, and returns the bytes
// stored: 0 when it did not (a store that failed did not).
func (c *Cache) Put(ctx context.Context, p Policy, alias, key string, e *Entry) int {
	n, _ := c.put(ctx, p, alias, key, e)
	return n
}

// put is Put, and the number of entries the in-memory store's bound pushed out for it.
func (c *Cache) put(ctx context.Context, p Policy, alias, key string, e *Entry) (n, evicted int) {
	if e == nil {
		return 0, 0
	}
	b, err := encode(e)
	if err != nil || (p.MaxEntryBytes > 0 && len(b) > p.MaxEntryBytes) {
		return 0, 0
	}
	if m, ok := c.Store.(*Memory); ok {
		return len(b), m.set(storeKey(alias, key), b, p.TTL)
	}
	if c.Store.Set(ctx, storeKey(alias, key), b, p.TTL) != nil {
		return 0, 0
	}
	return len(b), 0
}

// Clear deletes the entries of alias ("": of every alias) and returns how many. Unlike a
// read, a store that fails is an error: the caller asked for the deletion.
func (c *Cache) Clear(ctx context.Context, alias string) (int, error) {
	p := storePrefix
	if alias != "" {
		p += aliasEscape.Replace(alias) + ":"
	}
	return c.Store.Clear(ctx, p)
}

// storePrefix starts the store's name of every entry.
const storePrefix = "sluice:cache:"

// aliasEscape keeps an alias name from reaching into the next part of a store key.
var aliasEscape = strings.NewReplacer("%", "%25", ":", "%3A", "{", "%7B", "}", "%7D", "*", "%2A", "?", "%3F", "[", "%5B", "]", "%5D", "\\", "%5C")

// storeKey is the store's name of a cache key: the prefix, the alias (so the entries of one
// alias can be cleared), the hash in braces so a Redis cluster spreads entries over slots.
func storeKey(alias, key string) string {
	return storePrefix + aliasEscape.Replace(alias) + ":{" + key + "}"
}
