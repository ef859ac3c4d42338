package redisstore

import (
	"context"
	"time"

	"github.com/sluice-gw/sluice/internal/limit"
)

// Limiter is a limit.Limiter in Redis: the sliding logs of package limit, as one atomic
// script per reservation, so every replica counts against the same logs. Under
// redis.on_failure: open, a reservation Redis cannot take goes to this replica's own
// limit.Memory (each replica then enforces the whole limit alone); under closed it fails
// with ErrUnavailable.
type Limiter struct {
	s     *Store
	local limit.Memory
}

var _ limit.Limiter = (*Limiter)(nil)

// Limiter returns the rate limiter.
func (s *Store) Limiter() *Limiter { return &Limiter{s: s} }

func logKeys(key string) []string {
	base := "sluice:{key:" + key + "}"
	return []string{base + ":rpm", base + ":tpm", base + ":tpm:cost", base + ":tpm:sum"}
}

// Reserve implements limit.Limiter.
func (l *Limiter) Reserve(ctx context.Context, a limit.Ask) (limit.Result, error) {
	var v []int64
	run := l.s.call
	if a.ID != "" {
		run = l.s.retry // the script counts an id once
	}
	err := run(ctx, func(ctx context.Context) (err error) {
		v, err = reserveScript.Run(ctx, l.s.c, logKeys(a.Key),
			a.Requests.Limit, a.Requests.Window.Milliseconds(), a.Tokens.Limit, a.Tokens.Window.Milliseconds(),
			a.Cost, a.ID).Int64Slice()
		return err
	})
	if err != nil {
		if l.s.open && ctx.Err() == nil {
			return l.local.Reserve(ctx, a)
		}
		return limit.Result{}, err
	}
	ms := func(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
	res := limit.Result{OK: v[0] == 1, Never: v[1] == 1}
	if !res.OK {
		res.RetryAfter = ms(v[2])
	}
	if a.Requests.Limit > 0 {
		res.Requests = limit.Status{Limit: a.Requests.Limit, Remaining: max(a.Requests.Limit-v[3], 0), Reset: ms(v[4])}
	}
	if a.Tokens.Limit > 0 {
		res.Tokens = limit.Status{Limit: a.Tokens.Limit, Remaining: max(a.Tokens.Limit-v[5], 0), Reset: ms(v[6])}
	}
	return res, nil
}

// Release implements limit.Limiter. A reservation taken locally during an outage is
// released locally; under open, a release Redis missed is dropped (the request stays
// counted until it leaves the window: never more admitted than the limit).
func (l *Limiter) Release(ctx context.Context, key, id string) error {
	_ = l.local.Release(ctx, key, id)
	err := l.s.call(ctx, func(ctx context.Context) error {
		return releaseScript.Run(ctx, l.s.c, logKeys(key), id).Err()
	})
	if err != nil && l.s.open {
		return nil
	}
	return err
}

// Reconcile implements limit.Limiter. A reservation taken locally during an outage is
// reconciled locally; under open, a reconciliation Redis missed is dropped (the estimate
// stays counted).
func (l *Limiter) Reconcile(ctx context.Context, key, id string, tokens limit.Rule, used int64) error {
	_ = l.local.Reconcile(ctx, key, id, tokens, used)
	ks := logKeys(key)
	err := l.s.retry(ctx, func(ctx context.Context) error { // it sets the cost: twice is once
		return reconcileScript.Run(ctx, l.s.c, ks[2:], id, used).Err()
	})
	if err != nil && l.s.open {
		return nil
	}
	return err
}
