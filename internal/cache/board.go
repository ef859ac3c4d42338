package cache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Board is where the flights of every replica meet (redisstore's, in Redis): a lock per
// key with a lease, and the log of each leader's answer. Names are the cache's (one hash
// tag per key). An error is a failure to reach the Board: the cache goes on without
// coalescing across replicas, never fails a request for it. Safe for concurrent use.
type Board interface {
	// Claim makes token the holder of lock for lease if no one holds it (SET NX PX), and
	// returns the holder: token when claimed.
	Claim(ctx context.Context, lock, token string, lease time.Duration) (string, error)
	// Renew extends token's lease of lock; false: token no longer holds it.
	Renew(ctx context.Context, lock, token string, lease time.Duration) (bool, error)
	// Release ends token's hold of lock (a lock another holds now is left alone).
	Release(ctx context.Context, lock, token string) error
	// Holder is who holds lock now ("": no one).
	Holder(ctx context.Context, lock string) (string, error)
	// Append adds one entry to the log, which expires ttl after its last entry.
	Append(ctx context.Context, log string, entry []byte, ttl time.Duration) error
	// Read returns the entries of log after the entry id after ("0": from the start),
	// waiting up to block for one (0: not at all), and the id of the last returned.
	Read(ctx context.Context, log, after string, block time.Duration) ([][]byte, string, error)
}

// Coalescing times across replicas.
const (
	// DefaultLease is how long a leader holds its key without renewing it: a replica that
	// dies mid-answer holds its followers that long at most. The leader renews it every
	// third of it while its round goes on.
	DefaultLease = 3 * time.Second
	// logTTL keeps a leader's log readable for followers that are late to it.
	logTTL = time.Minute
	// maxPumps bounds the followers on this replica that read another's leader at once:
	// each holds a Redis connection in a blocking read. Past it a request leads here.
	maxPumps = 4
)

func (c *Cache) lease() time.Duration {
	if c.Lease > 0 {
		return c.Lease
	}
	return DefaultLease
}

func lockName(key string) string       { return "sluice:flight:{" + key + "}" }
func logName(key, token string) string { return lockName(key) + ":" + token }

// claim claims l's key on the Board for l and starts its publisher, and returns "", or
// returns the token of the leader on another replica to follow ("" too when the Board
// fails, or too many follow already: l leads on this replica alone).
func (c *Cache) claim(ctx context.Context, l *Lead) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	holder, err := c.Board.Claim(ctx, lockName(l.key), token, c.lease())
	switch {
	case err != nil || holder == "": // holder "": it released the lock just now; lead here
		return ""
	case holder == token:
		go c.publish(l.key, token, l.f)
		return ""
	}
	select {
	case c.pumps <- struct{}{}:
		return holder
	default:
		return ""
	}
}

// publish copies a leader's flight to its log on the Board as it is written (what is
// there when the last write returns goes as one entry), renews the lease meanwhile, and
// releases the lock after the last record. A Board that fails, or a lease lost, ends the
// copy: the followers elsewhere see the leader gone.
func (c *Cache) publish(key, token string, f *flight) {
	ctx := context.Background()
	lock, log, lease := lockName(key), logName(key, token), c.lease()
	renew := time.Now().Add(lease / 3)
	for i := 0; ; {
		rctx, cancel := context.WithDeadline(ctx, renew)
		recs, _ := f.read(rctx, i)
		cancel()
		if len(recs) > 0 {
			b, err := json.Marshal(recs)
			if err != nil || c.Board.Append(ctx, log, b, logTTL) != nil {
				return
			}
			i += len(recs)
			if recs[len(recs)-1].last() {
				_ = c.Board.Release(ctx, lock, token)
				return
			}
		}
		if !time.Now().Before(renew) {
			if ok, err := c.Board.Renew(ctx, lock, token, lease); !ok || err != nil {
				return
			}
			renew = time.Now().Add(lease / 3)
		}
	}
}

// pump copies the log of the leader holder on another replica into f, this replica's
// flight of key, until its last record; a leader whose lock is gone (its lease lapsed, it
// released it without a last record) or a Board that fails is a failed leader.
func (c *Cache) pump(key, holder string, f *flight) {
	defer func() { <-c.pumps }()
	defer c.drop(key, f)
	ctx := context.Background()
	lock, log, after := lockName(key), logName(key, holder), "0"
	for {
		entries, last, err := c.Board.Read(ctx, log, after, c.lease())
		if err != nil {
			f.add(Record{Failed: true})
			return
		}
		if len(entries) == 0 {
			h, err := c.Board.Holder(ctx, lock)
			if err == nil && h == holder {
				continue
			}
			// Gone, or done between the read and now: what it wrote last decides.
			if err == nil {
				entries, last, err = c.Board.Read(ctx, log, after, 0)
			}
			if err != nil || len(entries) == 0 {
				f.add(Record{Failed: true})
				return
			}
		}
		after = last
		for _, b := range entries {
			var recs []Record
			if json.Unmarshal(b, &recs) != nil {
				f.add(Record{Failed: true})
				return
			}
			f.add(recs...)
			if n := len(recs); n > 0 && recs[n-1].last() {
				return
			}
		}
	}
}
