package redisstore

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sluice-gw/sluice/internal/usage"
)

// Budgets is a usage.Budgets in Redis: per key, one counter for the UTC day and one for the
// month (nano-USD, real costs and open reservations), and a hash of its open holds (what
// each keeps, until when: every check adds them to both periods), checked and reserved by
// one atomic script, so concurrent calls on every replica see each other's reservations. Under
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

// heldLua sums the open holds of a key, in held (a number), from its hash KEYS[3] (a hold's
// ID: "left:until", until in unix seconds), at now (a number); an ended hold goes. within is
// what the hold ARGV[within] keeps (0: none, or ended).
const heldLua = `
local held, within = 0, 0
local hs = redis.call('HGETALL', KEYS[3])
for i = 1, #hs, 2 do
  local l, u = string.match(hs[i + 1], '^(%-?%d+):(%d+)$')
  if not l or tonumber(u) <= now then redis.call('HDEL', KEYS[3], hs[i])
  else
    held = held + tonumber(l)
    if hs[i] == wid then within = tonumber(l) end
  end
end
`

// reserveBudgetScript lets a call through while both periods have budget left (what they
// spent and the key's open holds), or while the hold it is within keeps some, and adds its
// estimate to both, and to its record; a reservation whose record exists passes and adds
// nothing: this call run again (its first answer was lost with its connection), or one that
// timed out and landed after its settle.
// KEYS: day counter, month counter, holds, the reservation's record (when it has an id).
// ARGV: daily cap, monthly cap (0: none), amount, day TTL, month TTL, record TTL (seconds),
// now (unix seconds), the hold it is within ("": none).
// Returns ok, which cap is spent (1 daily, 2 monthly), what it holds.
var reserveBudgetScript = redis.NewScript(`
if KEYS[4] and redis.call('EXISTS', KEYS[4]) == 1 then return {1, 0, 0} end
local now, wid = tonumber(ARGV[7]), ARGV[8]` + heldLua + `
local d = tonumber(redis.call('GET', KEYS[1]) or '0')
local m = tonumber(redis.call('GET', KEYS[2]) or '0')
local dl, ml = tonumber(ARGV[1]), tonumber(ARGV[2])
if within <= 0 then
  if dl > 0 and d + held >= dl then return {0, 1, d + held} end
  if ml > 0 and m + held >= ml then return {0, 2, m + held} end
end
if KEYS[4] then redis.call('SET', KEYS[4], ARGV[3], 'EX', ARGV[6]) end
redis.call('INCRBY', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('INCRBY', KEYS[2], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[5])
return {1, 0, 0}
`)

// holdBudgetScript takes a hold when what both periods spent, the key's open holds and its
// amount fit in each cap; a hold taken already, or ended already, passes.
// KEYS: day counter, month counter, holds. ARGV: daily cap, monthly cap (0: none), amount,
// the hold's ID, until, now (unix seconds). Returns as reserveBudgetScript.
var holdBudgetScript = redis.NewScript(`
local now, wid = tonumber(ARGV[6]), ''
if tonumber(ARGV[5]) <= now or redis.call('HEXISTS', KEYS[3], ARGV[4]) == 1 then return {1, 0, 0} end` + heldLua + `
local d = tonumber(redis.call('GET', KEYS[1]) or '0') + held
local m = tonumber(redis.call('GET', KEYS[2]) or '0') + held
local dl, ml, a = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if dl > 0 and (d >= dl or d + a > dl) then return {0, 1, d} end
if ml > 0 and (m >= ml or m + a > ml) then return {0, 2, m} end
redis.call('HSET', KEYS[3], ARGV[4], ARGV[3] .. ':' .. ARGV[5])
local ttl = tonumber(ARGV[5]) - now
if redis.call('TTL', KEYS[3]) < ttl then redis.call('EXPIRE', KEYS[3], ttl) end
return {1, 0, 0}
`)

// drawBudgetScript takes a cost off what a hold keeps (never below zero), once for each
// draw's id (its record).
// KEYS: holds, the draw's record. ARGV: the hold's ID, cost, record TTL (seconds).
var drawBudgetScript = redis.NewScript(`
if not redis.call('SET', KEYS[2], 1, 'NX', 'EX', ARGV[3]) then return 0 end
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return 0 end
local l, u = string.match(v, '^(%-?%d+):(%d+)$')
if not l then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], string.format('%d:%d', math.max(tonumber(l) - tonumber(ARGV[2]), 0), tonumber(u)))
return 1
`)

// releaseBudgetScript ends a hold. KEYS: holds. ARGV: the hold's ID.
var releaseBudgetScript = redis.NewScript(`return redis.call('HDEL', KEYS[1], ARGV[1])`)

// heldKey is the hash of key's open holds.
func heldKey(key string) string { return "sluice:{budget:" + key + "}:held" }

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
	run := b.s.call
	if r.ID != "" {
		run = b.s.retry // the script counts a record once
	}
	ks := budgetKeys(r)
	ks = append(ks[:2:2], append([]string{heldKey(r.Key)}, ks[2:]...)...)
	return b.decide(ctx, run, reserveBudgetScript, ks, func() (usage.Verdict, error) { return b.local.Reserve(ctx, r) },
		r.Budget.Daily, r.Budget.Monthly, r.Amount, dayTTL, monthTTL, recordTTL, time.Now().Unix(), r.Within)
}

// decide runs script, a check of a budget (reserve, hold), by run, and reads its verdict.
// Under on_failure: open, what Redis cannot decide local does (this replica's budgets).
func (b *Budgets) decide(ctx context.Context, run func(context.Context, func(context.Context) error) error, script *redis.Script,
	keys []string, local func() (usage.Verdict, error), args ...any) (usage.Verdict, error) {
	var v []int64
	err := run(ctx, func(ctx context.Context) (err error) {
		v, err = script.Run(ctx, b.s.c, keys, args...).Int64Slice()
		return err
	})
	if err != nil {
		if b.s.open && ctx.Err() == nil {
			return local()
		}
		return usage.Verdict{}, err
	}
	return verdict(v), nil
}

// verdict is a usage.Verdict of a script's answer: ok, which cap is spent (1 daily, 2
// monthly), what it holds.
func verdict(v []int64) usage.Verdict {
	if v[0] == 1 {
		return usage.Verdict{OK: true}
	}
	over := "daily"
	if v[1] == 2 {
		over = "monthly"
	}
	return usage.Verdict{Over: over, Spent: v[2]}
}

// Settle implements usage.Budgets. A reservation taken locally during an outage is settled
// locally too, and its whole cost goes to Redis (spooled while Redis is down): the fleet's
// counters end holding every call's real cost, whichever way it was reserved.
func (b *Budgets) Settle(ctx context.Context, r usage.Reservation, cost int64) error {
	_ = b.local.Settle(ctx, r, cost)
	return b.s.apply(ctx, write{script: settleBudgetScript, keys: budgetKeys(r),
		args: []any{cost, r.Amount, dayTTL, monthTTL, recordTTL}, idem: r.ID != ""})
}

// Hold implements usage.Budgets: a hold's hash lives as long as its last hold. Under
// on_failure: open, a hold Redis cannot take is this replica's own, as a reservation is.
func (b *Budgets) Hold(ctx context.Context, h usage.Hold) (usage.Verdict, error) {
	now := time.Now().UTC()
	r := usage.Reservation{Key: h.Key, Day: now.Format(usage.DayLayout), Month: now.Format("2006-01")}
	ks := append(budgetKeys(r), heldKey(h.Key))
	return b.decide(ctx, b.s.retry, holdBudgetScript, ks, func() (usage.Verdict, error) { return b.local.Hold(ctx, h) }, // the hash counts an ID once
		h.Budget.Daily, h.Budget.Monthly, h.Amount, h.ID, h.Until, now.Unix())
}

// Draw implements usage.Budgets; a draw Redis cannot take is spooled.
func (b *Budgets) Draw(ctx context.Context, h usage.Hold, id string, cost int64) error {
	_ = b.local.Draw(ctx, h, id, cost)
	return b.s.apply(ctx, write{script: drawBudgetScript, keys: []string{heldKey(h.Key), "sluice:{budget:" + h.Key + "}:d:" + id},
		args: []any{h.ID, cost, recordTTL}, idem: true})
}

// Release implements usage.Budgets; a release Redis cannot take is spooled.
func (b *Budgets) Release(ctx context.Context, h usage.Hold) error {
	_ = b.local.Release(ctx, h)
	return b.s.apply(ctx, write{script: releaseBudgetScript, keys: []string{heldKey(h.Key)}, args: []any{h.ID}, idem: true})
}
