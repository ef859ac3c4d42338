package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// A write of the account (a usage record, a budget's spend) that Redis could not take is
// kept in the spool and written again once Redis answers, oldest first. Every such write is
// a script that applies a record at most once, by its id (a key set with NX in the same
// script), so a write that timed out but landed all the same is not counted twice when the
// spool writes it again. The spool is bounded: what does not fit is dropped, counted
// (sluice.usage.dropped) and logged ("usage records dropped: N").

// recordTTL is how long Redis remembers a record's id: a record written again within it is
// counted once. It bounds the outage after which a write that timed out, and landed, may be
// counted twice (the spool writes it again once Redis is back), and costs about 100 bytes of
// Redis per request for that long.
const recordTTL = 3600 // seconds

// DefaultSpool is the bound of the spool (redis.spool) when Options leave it 0.
const DefaultSpool = 10_000

// write is one script call: the unit the spool keeps.
type write struct {
	script *redis.Script
	keys   []string
	args   []any
	// idem: a second run counts once (the write carries its record's id), so a run that met
	// a broken connection runs again at once (Store.retry).
	idem bool
}

// spool is a bounded FIFO of writes. Safe for concurrent use; one goroutine drains it (the
// breaker's), so peek then pop cannot race with another drain.
type spool struct {
	max int

	mu       sync.Mutex
	q        []write
	dropped  int64 // since the start
	unlogged int64 // dropped since the last log line
}

// push keeps w: false when the spool is full (the caller drops w, and says so with lose).
func (p *spool) push(w write) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.q) >= p.max {
		return false
	}
	p.q = append(p.q, w)
	return true
}

// lose counts a record dropped.
func (p *spool) lose() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropped++
	p.unlogged++
}

// peek is the oldest write.
func (p *spool) peek() (write, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.q) == 0 {
		return write{}, false
	}
	return p.q[0], true
}

// pop removes the oldest write.
func (p *spool) pop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.q[0] = write{}
	p.q = p.q[1:]
	if len(p.q) == 0 {
		p.q = nil // the backing array goes with the outage
	}
}

func (p *spool) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.q)
}

// takeUnlogged returns the drops not logged yet, and forgets them.
func (p *spool) takeUnlogged() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.unlogged
	p.unlogged = 0
	return n
}

// newID is a record's id: 128 random bits, unique across replicas.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// isReply reports whether err is Redis's own answer (a script or type error): Redis is up
// and will never take the write, so it is not kept.
func isReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && !tripping(err)
}

// apply runs w; a write Redis cannot take now is spooled, to be written once it answers.
// Only a write dropped (the spool full, or Redis refused it) is an error.
func (s *Store) apply(ctx context.Context, w write) error {
	err := s.run(ctx, w)
	switch {
	case err == nil:
		return nil
	case isReply(err):
		s.lose()
		return err
	case !s.spool.push(w):
		s.lose()
		return fmt.Errorf("%w: the spool is full (%d records)", err, s.spool.max)
	}
	telemetry.UsageSpooled(context.Background(), 1)
	s.br.kick()
	return nil
}

// run runs w (twice at most: Store.retry, for an idem write); redis.Nil is an answer.
func (s *Store) run(ctx context.Context, w write) error {
	call := s.call
	if w.idem {
		call = s.retry
	}
	err := call(ctx, func(ctx context.Context) error {
		if s.form == formNode {
			return w.script.Run(ctx, s.c, w.keys, w.args...).Err()
		}
		return s.replicated(ctx, w)
	})
	if errors.Is(err, redis.Nil) {
		return nil
	}
	return err
}

// replicated runs w on the master of its keys, followed by WAIT 1 on the same connection:
// the write is taken once a replica has it too. Replication is asynchronous: a master
// killed after its answer and before its replica had the write would lose a record the
// gateway counts as written. A WAIT that no replica answered within a tenth of the timeout
// is taken as done for the caller (a master without a replica, just promoted, can do no
// better), and that master's writes skip WAIT for a second: a lost replica slows the
// account a little, never stops it. A write taken without a replica's confirmation is kept
// and confirmed later (confirm.go): it is the one a Sentinel switch-over would lose.
func (s *Store) replicated(ctx context.Context, w write) error {
	node, addr, err := s.master(ctx, w.keys[0])
	if err != nil {
		return err
	}
	skip, _ := s.lonely.Load(addr)
	wait := skip == nil || time.Now().After(skip.(time.Time))
	var script *redis.Cmd
	var acks *redis.Cmd
	_, err = node.Pipelined(ctx, func(p redis.Pipeliner) error {
		script = w.script.Eval(ctx, p, w.keys, w.args...) // EVAL: a pipeline cannot fall back from EVALSHA
		if wait {
			acks = p.Do(ctx, "WAIT", 1, max(s.timeout.Milliseconds()/10, 1))
		}
		return nil
	})
	if err == nil || errors.Is(err, redis.Nil) {
		confirmed := false
		if acks != nil {
			n, _ := acks.Int64()
			if confirmed = n > 0; !confirmed {
				s.lonely.Store(addr, time.Now().Add(time.Second))
			}
		}
		if !confirmed {
			s.unsure(w)
		}
		return nil
	}
	if e := script.Err(); e != nil && slotMoving(e) {
		// The slot map was stale (a resharding, a failover): the cluster client follows
		// MOVED and ASK, and retries TRYAGAIN, by itself. This write goes without WAIT.
		reload(s.c)
		if err := w.script.Run(ctx, s.c, w.keys, w.args...).Err(); err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		s.unsure(w)
		return nil
	}
	if script.Err() != nil {
		return script.Err()
	}
	return err
}

// slotMoving reports whether err is a cluster's answer about a slot on the move.
func slotMoving(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	for _, p := range []string{"MOVED ", "ASK ", "TRYAGAIN "} {
		if strings.HasPrefix(re.Error(), p) {
			return true
		}
	}
	return false
}

// drain writes the spooled records, oldest first, until none is left, then confirms the
// writes no replica confirmed (confirm.go): true once both are done, false when Redis
// fails (the record stays at the head, for the next pass) or a write is still unconfirmed.
func (s *Store) drain(ctx context.Context) bool {
	defer s.logDropped(true)
	for {
		w, ok := s.spool.peek()
		if !ok {
			return s.confirm(ctx)
		}
		err := s.run(ctx, w)
		if err != nil && !isReply(err) {
			return false
		}
		s.spool.pop()
		telemetry.UsageSpooled(context.Background(), -1)
		if err != nil {
			s.log.Warn("redis refused a spooled usage record", "err", err.Error())
			s.lose()
		}
	}
}

// lose counts a record dropped (the spool full, or Redis refused it), and logs at most once
// per LogEvery. The spool's metrics are the process's (telemetry.Default), whichever request
// or background task moved them: one gauge, in and out.
func (s *Store) lose() {
	s.spool.lose()
	telemetry.UsageDropped(context.Background(), 1)
	s.logDropped(false)
}

// logDropped logs the records dropped since the last line: now when flush (the end of an
// outage, or Close), else at most once per LogEvery.
func (s *Store) logDropped(flush bool) {
	now, last := time.Now().UnixNano(), s.lastDropLog.Load()
	if !flush && (now-last < int64(s.logEvery) || !s.lastDropLog.CompareAndSwap(last, now)) {
		return
	}
	if n := s.spool.takeUnlogged(); n > 0 {
		s.log.Warn(fmt.Sprintf("usage records dropped: %d", n), "spool", s.spool.max, "waiting", s.spool.len())
	}
}

// Spooled is the number of records waiting for Redis.
func (s *Store) Spooled() int { return s.spool.len() }

// Dropped is the number of records of the account dropped since the start: the spool was
// full, or Redis refused them.
func (s *Store) Dropped() int64 {
	s.spool.mu.Lock()
	defer s.spool.mu.Unlock()
	return s.spool.dropped
}
