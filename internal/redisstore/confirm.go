package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A write of the account that a master took but no replica confirmed (replicated: WAIT
// answered 0, or was skipped while the master is lonely) can still be lost, and the Store
// has already counted it as written. Sentinel's switch-over is the case that loses it
// (issue 34): SENTINEL FAILOVER promotes the replica, and the old master, no longer
// replicated, takes writes until the client learns of the new master (the sentinels'
// +switch-master, about a second); once Sentinel turns it into a replica, it resyncs in
// full from the new master and the writes are gone: 40 to 100 records per fleet at 100
// requests a second. A master killed right after an unconfirmed write loses it the same way.
//
// Such writes are kept, with their ids, and the breaker's goroutine writes them again
// (Store.confirm), a batch at a time, on the master that serves their keys now, followed by WAIT
// on the same connection, until a replica confirms a batch; then they are safe. On the same
// master a second run counts nothing (the id is there); on a new master that lacks the
// write, it adds it, once. Every run of the account's scripts writes (addUsageScript
// refreshes a known id's TTL), so the WAIT after a batch covers the whole batch.
//
// Bounded: at most Options.Spool writes wait for a confirmation; beyond, the oldest is
// forgotten (it is written on a master, only unprotected from a switch-over), and so is one
// older than unconfirmedAge, which must not be written again once Redis may have forgotten
// its id (recordTTL). Forgotten writes are logged ("usage records not confirmed by a
// replica, forgotten: N"), at most once per LogEvery. A write without an id (a settle of a
// reservation without one) cannot be run twice and is not kept.

// confirmBatch is how many writes one confirmation pass writes again before its WAIT.
const confirmBatch = 64

// unconfirmedAge bounds how long a write waits for a replica: well within recordTTL, so
// that a write written again still meets its id.
const unconfirmedAge = 10 * time.Minute

// pending is a write a master took, and when it took it.
type pending struct {
	w  write
	at time.Time
}

// unconfirmed is the bounded queue of writes no replica confirmed, oldest first. Safe for
// concurrent use: the request path keeps, the breaker's goroutine takes and puts back.
type unconfirmed struct {
	max int

	mu     sync.Mutex
	q      []pending
	forgot int64 // forgotten since the last log line
}

// keep adds ps; beyond max, the oldest are forgotten.
func (u *unconfirmed) keep(ps ...pending) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.q = append(u.q, ps...)
	if over := len(u.q) - u.max; over > 0 {
		clear(u.q[:over])
		u.q = u.q[over:]
		u.forgot += int64(over)
	}
}

// take removes and returns up to n writes, oldest first, forgetting those older than
// unconfirmedAge at now. On a cluster (bySlot) they all share the first one's hash tag,
// so one master serves them all.
func (u *unconfirmed) take(n int, now time.Time, bySlot bool) []pending {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []pending
	left := u.q[:0]
	for _, p := range u.q {
		switch {
		case now.Sub(p.at) > unconfirmedAge:
			u.forgot++
		case len(out) < n && (!bySlot || len(out) == 0 || tag(p.w.keys[0]) == tag(out[0].w.keys[0])):
			out = append(out, p)
		default:
			left = append(left, p)
		}
	}
	clear(u.q[len(left):])
	u.q = left
	if len(u.q) == 0 {
		u.q = nil // the backing array goes with the switch-over
	}
	return out
}

func (u *unconfirmed) len() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.q)
}

// forget counts n writes forgotten.
func (u *unconfirmed) forget(n int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.forgot += n
}

// takeForgot returns the writes forgotten since the last call, and resets the count.
func (u *unconfirmed) takeForgot() int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := u.forgot
	u.forgot = 0
	return n
}

// tag is key's hash tag as Redis Cluster hashes it: what is between the first { and the
// next }, when not empty; else the whole key.
func tag(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i+1 : i+1+j]
		}
	}
	return key
}

// unsure keeps w, which a master took without a replica's confirmation, and wakes the
// breaker's goroutine to confirm it. A write without an id is not kept: run twice, it would
// count twice.
func (s *Store) unsure(w write) {
	if !w.idem {
		return
	}
	s.unconfirmed.keep(pending{w: w, at: time.Now()})
	s.br.kick()
}

// confirm writes the unconfirmed writes again, a batch at a time, each batch followed by
// WAIT, until none is left (true) or a batch is not confirmed (false: they wait for the
// breaker's next pass, a second later).
func (s *Store) confirm(ctx context.Context) bool {
	defer s.logForgotten()
	for {
		ps := s.unconfirmed.take(confirmBatch, time.Now(), s.form == formCluster)
		if len(ps) == 0 {
			return true
		}
		left := s.reconfirm(ctx, ps)
		if len(left) > 0 {
			s.unconfirmed.keep(left...)
			return false
		}
	}
}

// reconfirm writes ps again on the master of their keys, then WAIT 1 (half the timeout)
// on the same connection, and returns those still unconfirmed: all of them unless a
// replica answered, else those whose run failed. A write Redis refuses with its own answer
// (a script error) is forgotten: its first run was taken, a second is not.
func (s *Store) reconfirm(ctx context.Context, ps []pending) []pending {
	var cmds []*redis.Cmd
	var acks *redis.Cmd
	var addr string
	err := s.retry(ctx, func(ctx context.Context) error {
		node, a, err := s.master(ctx, ps[0].w.keys[0])
		if err != nil {
			return err
		}
		addr, cmds = a, cmds[:0]
		_, err = node.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, q := range ps {
				cmds = append(cmds, q.w.script.Eval(ctx, p, q.w.keys, q.w.args...))
			}
			acks = p.Do(ctx, "WAIT", 1, max(s.timeout.Milliseconds()/2, 1))
			return nil
		})
		switch {
		case err != nil && slotMoving(err):
			// A resharding moves the slot: not an outage that trips the breaker (it refused
			// 683 calls of TestClusterReshard); the next pass finds the slot's new master.
			reload(s.c)
			return nil
		case err != nil && (isReply(err) || errors.Is(err, redis.Nil)):
			return nil // one script's answer, sorted out below
		}
		return err
	})
	if err != nil || acks.Err() != nil {
		return ps
	}
	if n, _ := acks.Int64(); n == 0 {
		return ps
	}
	s.lonely.Delete(addr) // a replica answers again: the request path may WAIT again
	var left []pending
	for i, c := range cmds {
		switch e := c.Err(); {
		case e == nil || errors.Is(e, redis.Nil):
		case isReply(e):
			s.unconfirmed.forget(1)
		default:
			left = append(left, ps[i])
		}
	}
	return left
}

// master is the client that reaches the master of key, and its address ("" but on a
// cluster: a FailoverClient or a node has one master).
func (s *Store) master(ctx context.Context, key string) (redis.Cmdable, string, error) {
	cc, ok := s.c.(*redis.ClusterClient)
	if !ok {
		return s.c, "", nil
	}
	m, err := cc.MasterForKey(ctx, key)
	if err != nil {
		return nil, "", err
	}
	return m, m.Options().Addr, nil
}

// logForgotten logs the writes forgotten unconfirmed since the last line, at most once per
// LogEvery.
func (s *Store) logForgotten() {
	now, last := time.Now().UnixNano(), s.lastForgotLog.Load()
	if now-last < int64(s.logEvery) || !s.lastForgotLog.CompareAndSwap(last, now) {
		return
	}
	if n := s.unconfirmed.takeForgot(); n > 0 {
		s.log.Warn(fmt.Sprintf("usage records not confirmed by a replica, forgotten: %d", n),
			"bound", s.unconfirmed.max, "waiting", s.unconfirmed.len())
	}
}

// Unconfirmed is the number of writes of the account that a master took and no replica
// has confirmed yet.
func (s *Store) Unconfirmed() int { return s.unconfirmed.len() }
