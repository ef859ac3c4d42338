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
// itself); under closed it fails with ErrUnavailable. Settles are idempotent (each
// reservation has a record of what Redis holds for it), and one Redis cannot take is
// spooled like a usage record: spending made during an outage reaches Redis once it is back.
type Budgets struct {
	s     *Store
	local usage.MemoryBudgets
}

var _ usage.Budgets = (*Budgets)(nil)

// Budgets returns the budgets.
func (s *Store) Budgets() *Budgets { return &Budgets{s: s} }

// budgetKeys are the day and month counters of r, and its record (what they hold for it),
// when r has an id.
func budgetKeys(r usage.Reservation) []string {
	base := "sluice:{budget:" + r.Key + "}"
	ks := []string{base + ":day:" + r.Day, base + ":month:" + r.Month}
	if r.ID != "" {
		ks = append(ks, base+":r:"+r.ID)
	}
	return ks
}

// A day's counter lives two days, a month's 32: long enough for late settles, never forever.
const (
	dayTTL   = 2 * 24 * 3600
	monthTTL = 32 * 24 * 3600
)

// reserveBudgetScript lets a call through while both periods have budget left, and adds its
// estimate to both, and to its record; a reservation whose record exists passes and adds
// nothing: this call run again (its first answer was lost with its connection), or one that
// timed out and landed after its settle.
// KEYS: day counter, month counter, the reservation's record (when it has an id). ARGV:
// daily cap, monthly cap (0: none), amount, day TTL, month TTL, record TTL (seconds).
// Returns ok, which cap is spent (1 daily, 2 monthly), what it holds.
var reserveBudgetScript = redis.NewScript(`
if KEYS[3] and redis.call('EXISTS', KEYS[3]) == 1 then return {1, 0, 0} end
local d = tonumber(redis.call('GET', KEYS[1]) or '0')
local m = tonumber(redis.call('GET', KEYS[2]) or '0')
local dl, ml = tonumber(ARGV[1]), tonumber(ARGV[2])
if dl > 0 and d >= dl then return {0, 1, d} end
if ml > 0 and m >= ml then return {0, 2, m} end
if KEYS[3] then redis.call('SET', KEYS[3], ARGV[3], 'EX', ARGV[6]) end
redis.call('INCRBY', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('INCRBY', KEYS[2], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[5])
return {1, 0, 0}
`)

// settleBudgetScript makes both counters hold the real cost for a reservation: it adds the
// difference with what they hold for it (its record: the amount, the cost of an earlier
// settle, or nothing for a reservation Redis never took, made locally during an outage), so
// a settle written twice counts once. A counter that expired takes no refund.
// KEYS: day counter, month counter, the reservation's record (absent: no id). ARGV: cost,
// amount (what a reservation without a record holds), day TTL, month TTL, record TTL (s).
var settleBudgetScript = redis.NewScript(`
local held = tonumber(ARGV[2])
if KEYS[3] then held = tonumber(redis.call('GET', KEYS[3]) or '0') end
local d = tonumber(ARGV[1]) - held
for i = 1, 2 do
  if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('INCRBY', KEYS[i], d)
  elseif d > 0 then redis.call('SET', KEYS[i], d, 'EX', ARGV[2 + i]) end
end
if KEYS[3] then redis.call('SET', KEYS[3], ARGV[1], 'EX', ARGV[5]) end
return 1
`)

// Reserve implements usage.Budgets.
func (b *Budgets) Reserve(ctx context.Context, r usage.Reservation) (usage.Verdict, error) {
	var v []int64
	run := b.s.call
	if r.ID != "" {
		run = b.s.retry // the script counts a record once
	}
	err := run(ctx, func(ctx context.Context) (err error) {
		v, err = reserveBudgetScript.Run(ctx, b.s.c, budgetKeys(r),
			r.Budget.Daily, r.Budget.Monthly, r.Amount, dayTTL, monthTTL, recordTTL).Int64Slice()
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
// locally too, and its whole cost goes to Redis (spooled while Redis is down): the fleet's
// counters end holding every call's real cost, whichever way it was reserved.
func (b *Budgets) Settle(ctx context.Context, r usage.Reservation, cost int64) error {
	_ = b.local.Settle(ctx, r, cost)
	return b.s.apply(ctx, write{script: settleBudgetScript, keys: budgetKeys(r),
		args: []any{cost, r.Amount, dayTTL, monthTTL, recordTTL}, idem: r.ID != ""})
}
