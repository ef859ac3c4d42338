package redisstore

import (
	"context"

	"github.com/redis/go-redis/v9"
	"github.com/sluice-gw/sluice/internal/usage"
)

// Budgets is a usage.Budgets in Redis: per key, one counter for the UTC day and one for the
// month (nano-USD, real costs and open reservations), checked and reserved by one atomic
// script, so concurrent calls on every replica see each other's reservations. Under
// redis.on_failure: open, a reservation Redis cannot take goes to this replica's own
// usage.MemoryBudgets (each replica then enforces the whole budget alone, from what it saw
// itself); under closed it fails with ErrUnavailable.
type Budgets struct {
	s     *Store
	local usage.MemoryBudgets
}

var _ usage.Budgets = (*Budgets)(nil)

// Budgets returns the budgets.
func (s *Store) Budgets() *Budgets { return &Budgets{s: s} }

func budgetKeys(r usage.Reservation) []string {
	base := "sluice:{budget:" + r.Key + "}"
	return []string{base + ":day:" + r.Day, base + ":month:" + r.Month}
}

// A day's counter lives two days, a month's 32: long enough for late settles, never forever.
const (
	dayTTL   = 2 * 24 * 3600
	monthTTL = 32 * 24 * 3600
)

// reserveBudgetScript lets a call through while both periods have budget left, and adds its
// estimate to both.
// KEYS: day counter, month counter. ARGV: daily cap, monthly cap (0: none), amount, day TTL,
// month TTL (seconds). Returns ok, which cap is spent (1 daily, 2 monthly), what it holds.
var reserveBudgetScript = redis.NewScript(`
local d = tonumber(redis.call('GET', KEYS[1]) or '0')
local m = tonumber(redis.call('GET', KEYS[2]) or '0')
local dl, ml = tonumber(ARGV[1]), tonumber(ARGV[2])
if dl > 0 and d >= dl then return {0, 1, d} end
if ml > 0 and m >= ml then return {0, 2, m} end
redis.call('INCRBY', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('INCRBY', KEYS[2], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[5])
return {1, 0, 0}
`)

// settleBudgetScript adds the difference between the real cost and the reservation to both
// counters, unless they expired.
// KEYS: day counter, month counter. ARGV: difference.
var settleBudgetScript = redis.NewScript(`
for i = 1, 2 do
  if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('INCRBY', KEYS[i], ARGV[1]) end
end
return 1
`)

// Reserve implements usage.Budgets.
func (b *Budgets) Reserve(ctx context.Context, r usage.Reservation) (usage.Verdict, error) {
	var v []int64
	err := b.s.call(ctx, func(ctx context.Context) (err error) {
		v, err = reserveBudgetScript.Run(ctx, b.s.c, budgetKeys(r),
			r.Budget.Daily, r.Budget.Monthly, r.Amount, dayTTL, monthTTL).Int64Slice()
		return err
	})
	if err != nil {
		if b.s.open && ctx.Err() == nil {
			return b.local.Reserve(ctx, r)
		}
		return usage.Verdict{}, err
	}
	if v[0] == 1 {
		return usage.Verdict{OK: true}, nil
	}
	over := "daily"
	if v[1] == 2 {
		over = "monthly"
	}
	return usage.Verdict{Over: over, Spent: v[2]}, nil
}

// Settle implements usage.Budgets. A reservation taken locally during an outage is settled
// locally too; under open, a settle Redis missed is dropped (the estimate stays counted).
func (b *Budgets) Settle(ctx context.Context, r usage.Reservation, cost int64) error {
	_ = b.local.Settle(ctx, r, cost)
	if cost == r.Amount {
		return nil
	}
	err := b.s.call(ctx, func(ctx context.Context) error {
		return settleBudgetScript.Run(ctx, b.s.c, budgetKeys(r), cost-r.Amount).Err()
	})
	if err != nil && b.s.open {
		return nil
	}
	return err
}
