package redisstore

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sluice-gw/sluice/internal/batch"
)

// Batches is the emulated batches' store (batch.Store) in Redis, read by every replica:
//
//	sluice:{bf:<file>}:<n>       string  chunk n of a file's content
//	sluice:{bo:<id>}             string  a file's or batch's record
//	sluice:bidx:<list>           zset    ids by creation time
//	sluice:{bp:<batch>}:cursor   string  the next part never claimed
//	sluice:{bp:<batch>}:leases   zset    parts claimed, by lease end (ms, Redis's clock)
//	sluice:{bp:<batch>}:done     set     parts finished
//	sluice:{bp:<batch>}:res      hash    line -> result
//	sluice:{bp:<batch>}:tally    hash    completed, failed, in, out
//
// A batch's progress keys share its hash tag, so each script touches one slot. Every write
// keeps what it writes for ttl. Safe for concurrent use.
type Batches struct {
	s   *Store
	ttl time.Duration
}

var _ batch.Store = (*Batches)(nil)

// Batches returns the emulated batches' store, keeping what it writes for ttl.
func (s *Store) Batches(ttl time.Duration) *Batches { return &Batches{s: s, ttl: ttl} }

func chunkKey(file string, n int) string { return "sluice:{bf:" + file + "}:" + strconv.Itoa(n) }
func objKey(id string) string            { return "sluice:{bo:" + id + "}" }
func progKey(b, what string) string      { return "sluice:{bp:" + b + "}:" + what }

func (b *Batches) PutChunk(ctx context.Context, file string, n int, p []byte) error {
	return b.s.call(ctx, func(ctx context.Context) error { return b.s.c.Set(ctx, chunkKey(file, n), p, b.ttl).Err() })
}

// get reads key: nil, nil when there is none.
func (b *Batches) get(ctx context.Context, key string) ([]byte, error) {
	var v []byte
	err := b.s.retry(ctx, func(ctx context.Context) (err error) {
		v, err = b.s.c.Get(ctx, key).Bytes()
		if errors.Is(err, redis.Nil) {
			v, err = nil, nil
		}
		return err
	})
	return v, err
}

func (b *Batches) Chunk(ctx context.Context, file string, n int) ([]byte, error) {
	return b.get(ctx, chunkKey(file, n))
}

func (b *Batches) DropChunks(ctx context.Context, file string, n int) error {
	for i := 0; i < n; i += 100 {
		var keys []string
		for k := i; k < min(n, i+100); k++ {
			keys = append(keys, chunkKey(file, k))
		}
		if err := b.s.call(ctx, func(ctx context.Context) error { return b.s.c.Del(ctx, keys...).Err() }); err != nil {
			return err
		}
	}
	return nil
}

func (b *Batches) Put(ctx context.Context, id string, rec []byte) error {
	return b.s.call(ctx, func(ctx context.Context) error { return b.s.c.Set(ctx, objKey(id), rec, b.ttl).Err() })
}

func (b *Batches) Get(ctx context.Context, id string) ([]byte, error) { return b.get(ctx, objKey(id)) }

// swapScript: KEYS: record. ARGV: old, new, ttl ms. 1: swapped.
var swapScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`)

func (b *Batches) Swap(ctx context.Context, id string, old, rec []byte) (bool, error) {
	var n int64
	err := b.s.call(ctx, func(ctx context.Context) (err error) {
		n, err = swapScript.Run(ctx, b.s.c, []string{objKey(id)}, old, rec, b.ttl.Milliseconds()).Int64()
		return err
	})
	return n == 1, err
}

func (b *Batches) Drop(ctx context.Context, id string) (bool, error) {
	var n int64
	err := b.s.call(ctx, func(ctx context.Context) (err error) {
		n, err = b.s.c.Del(ctx, objKey(id)).Result()
		return err
	})
	return n > 0, err
}

func (b *Batches) Index(ctx context.Context, list, id string, at int64) error {
	return b.s.call(ctx, func(ctx context.Context) error {
		return b.s.c.ZAdd(ctx, "sluice:bidx:"+list, redis.Z{Score: float64(at), Member: id}).Err()
	})
}

func (b *Batches) Unindex(ctx context.Context, list, id string) error {
	return b.s.call(ctx, func(ctx context.Context) error { return b.s.c.ZRem(ctx, "sluice:bidx:"+list, id).Err() })
}

func (b *Batches) Indexed(ctx context.Context, list string) ([]string, error) {
	var ids []string
	err := b.s.retry(ctx, func(ctx context.Context) (err error) {
		ids, err = b.s.c.ZRevRange(ctx, "sluice:bidx:"+list, 0, -1).Result()
		return err
	})
	return ids, err
}

// claimScript: KEYS: cursor, leases, done. ARGV: parts, lease ms, ttl ms. {part, finished}.
var claimBatchScript = redis.NewScript(luaNow + `
local now = nowms()
local part = -1
local lapsed = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 1)
if #lapsed > 0 then
  part = tonumber(lapsed[1])
else
  local c = tonumber(redis.call('GET', KEYS[1]) or '0')
  if c < tonumber(ARGV[1]) then
    part = c
    redis.call('SET', KEYS[1], c + 1, 'PX', ARGV[3])
  end
end
if part >= 0 then
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), part)
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return {part, redis.call('SCARD', KEYS[3])}
`)

func (b *Batches) Claim(ctx context.Context, id string, parts int, lease time.Duration) (int, int, error) {
	var v []int64
	err := b.s.call(ctx, func(ctx context.Context) (err error) {
		v, err = claimBatchScript.Run(ctx, b.s.c, []string{progKey(id, "cursor"), progKey(id, "leases"), progKey(id, "done")},
			parts, lease.Milliseconds(), b.ttl.Milliseconds()).Int64Slice()
		return err
	})
	if err != nil || len(v) != 2 {
		return -1, 0, err
	}
	return int(v[0]), int(v[1]), nil
}

// renewScript: KEYS: leases. ARGV: part, lease ms.
var renewScript = redis.NewScript(luaNow + `
redis.call('ZADD', KEYS[1], 'XX', nowms() + tonumber(ARGV[2]), ARGV[1])
return 0
`)

func (b *Batches) Renew(ctx context.Context, id string, part int, lease time.Duration) error {
	return b.s.call(ctx, func(ctx context.Context) error {
		return renewScript.Run(ctx, b.s.c, []string{progKey(id, "leases")}, part, lease.Milliseconds()).Err()
	})
}

// finishScript: KEYS: leases, done. ARGV: part, ttl ms. The parts finished.
var finishScript = redis.NewScript(`
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return redis.call('SCARD', KEYS[2])
`)

func (b *Batches) Finish(ctx context.Context, id string, part int) (int, error) {
	var n int64
	err := b.s.call(ctx, func(ctx context.Context) (err error) {
		n, err = finishScript.Run(ctx, b.s.c, []string{progKey(id, "leases"), progKey(id, "done")}, part, b.ttl.Milliseconds()).Int64()
		return err
	})
	return int(n), err
}

// leasedScript: KEYS: leases. The leases not lapsed.
var leasedScript = redis.NewScript(luaNow + `return redis.call('ZCOUNT', KEYS[1], '(' .. nowms(), '+inf')`)

func (b *Batches) Leased(ctx context.Context, id string) (int, error) {
	var n int64
	err := b.s.retry(ctx, func(ctx context.Context) (err error) {
		n, err = leasedScript.Run(ctx, b.s.c, []string{progKey(id, "leases")}).Int64()
		return err
	})
	return int(n), err
}

// answerScript: KEYS: res, tally. ARGV: line, result, completed, failed, in, out, ttl ms.
var answerScript = redis.NewScript(`
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[2], 'completed', ARGV[3])
redis.call('HINCRBY', KEYS[2], 'failed', ARGV[4])
redis.call('HINCRBY', KEYS[2], 'in', ARGV[5])
redis.call('HINCRBY', KEYS[2], 'out', ARGV[6])
redis.call('PEXPIRE', KEYS[1], ARGV[7])
redis.call('PEXPIRE', KEYS[2], ARGV[7])
return 1
`)

func (b *Batches) Answer(ctx context.Context, id string, line int, result []byte, t batch.Tally) (bool, error) {
	var n int64
	// Safe to run twice: a second run finds the line answered.
	err := b.s.retry(ctx, func(ctx context.Context) (err error) {
		n, err = answerScript.Run(ctx, b.s.c, []string{progKey(id, "res"), progKey(id, "tally")}, line, result,
			t.Completed, t.Failed, t.InputTokens, t.OutputTokens, b.ttl.Milliseconds()).Int64()
		return err
	})
	return n == 1, err
}

func (b *Batches) Answers(ctx context.Context, id string, from, to int) ([][]byte, error) {
	out := make([][]byte, 0, max(to-from, 0))
	if to <= from {
		return out, nil
	}
	fields := make([]string, 0, to-from)
	for i := from; i < to; i++ {
		fields = append(fields, strconv.Itoa(i))
	}
	var vs []any
	err := b.s.retry(ctx, func(ctx context.Context) (err error) {
		vs, err = b.s.c.HMGet(ctx, progKey(id, "res"), fields...).Result()
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, v := range vs {
		s, ok := v.(string)
		if !ok {
			out = append(out, nil)
			continue
		}
		out = append(out, []byte(s))
	}
	return out, nil
}

func (b *Batches) Tally(ctx context.Context, id string) (batch.Tally, error) {
	var m map[string]string
	err := b.s.retry(ctx, func(ctx context.Context) (err error) {
		m, err = b.s.c.HGetAll(ctx, progKey(id, "tally")).Result()
		return err
	})
	n := func(k string) int64 { v, _ := strconv.ParseInt(m[k], 10, 64); return v }
	return batch.Tally{Completed: n("completed"), Failed: n("failed"), InputTokens: n("in"), OutputTokens: n("out")}, err
}
