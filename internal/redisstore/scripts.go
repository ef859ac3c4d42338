package redisstore

import "github.com/redis/go-redis/v9"

// The scripts run atomically in Redis: a check and its write can never interleave with
// another replica's. Each touches keys of one hash tag only (Redis Cluster). go-redis runs
// them by SHA and falls back to EVAL after a restart emptied the script cache.

// luaNow is Redis's clock in milliseconds. Scripts that call TIME before writing are fine
// since Redis 5 (effects replication; the only mode since Redis 7).
const luaNow = `
local function nowms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`

// luaCosts sums the costs of a tokens log's entries in chunks (unpack has a stack limit) and
// calls visit(id, score, running total) until it returns true.
const luaCosts = `
local function walk(log, costs, visit)
  local start, total = 0, 0
  while true do
    local es = redis.call('ZRANGE', log, start, start + 499, 'WITHSCORES')
    if #es == 0 then return total end
    local ids = {}
    for i = 1, #es, 2 do ids[#ids + 1] = es[i] end
    local cs = redis.call('HMGET', costs, unpack(ids))
    for i = 1, #ids do
      total = total + (tonumber(cs[i]) or 0)
      if visit(ids[i], tonumber(es[2 * i]), total) then return total end
    end
    start = start + 500
  end
end
`

// reserveScript checks a request and its token estimate against both sliding logs and, if
// both pass, records them; a refused ask records nothing. An id in a log already is this
// reservation run again (its first answer was lost with its connection): it passes, and
// records nothing more, so a retried reservation counts once.
// KEYS: requests log, tokens log, tokens costs, tokens sum.
// ARGV: requests limit, requests window ms, tokens limit, tokens window ms, cost, id.
// Returns: ok, never, retry ms, requests used, requests reset ms, tokens used, tokens reset ms.
var reserveScript = redis.NewScript(luaNow + luaCosts + `
local now = nowms()
local rl, rw, tl, tw = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local cost, id = tonumber(ARGV[5]), ARGV[6]
local ok, never, wait, rused, tused = 1, 0, 0, 0, 0
local again = (rl > 0 and redis.call('ZSCORE', KEYS[1], id)) or (tl > 0 and redis.call('HEXISTS', KEYS[3], id) == 1)

if rl > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - rw)
  rused = redis.call('ZCARD', KEYS[1])
  if not again and rused + 1 > rl then
    ok = 0
    -- one more fits once the (rused - rl + 1) oldest entries have left
    local e = redis.call('ZRANGE', KEYS[1], rused - rl, rused - rl, 'WITHSCORES')
    wait = math.max(wait, tonumber(e[2]) + rw - now)
  end
end

if tl > 0 then
  -- drop the entries that left the window, with their costs
  while true do
    local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - tw, 'LIMIT', 0, 500)
    if #old == 0 then break end
    local cs = redis.call('HMGET', KEYS[3], unpack(old))
    local freed = 0
    for i = 1, #old do freed = freed + (tonumber(cs[i]) or 0) end
    redis.call('HDEL', KEYS[3], unpack(old))
    redis.call('ZREM', KEYS[2], unpack(old))
    redis.call('DECRBY', KEYS[4], freed)
  end
  tused = tonumber(redis.call('GET', KEYS[4]) or '0')
  if again then
    -- counted already
  elseif cost > tl then
    ok, never = 0, 1
  elseif tused + cost > tl then
    ok = 0
    local need, w = tused + cost - tl, tw
    walk(KEYS[2], KEYS[3], function(_, at, freed)
      if freed >= need then w = at + tw - now; return true end
      return false
    end)
    wait = math.max(wait, w)
  end
end

if ok == 1 and not again then
  if rl > 0 then
    redis.call('ZADD', KEYS[1], now, id)
    redis.call('PEXPIRE', KEYS[1], rw)
    rused = rused + 1
  end
  if tl > 0 then
    redis.call('ZADD', KEYS[2], now, id)
    redis.call('HSET', KEYS[3], id, cost)
    tused = redis.call('INCRBY', KEYS[4], cost)
    for k = 2, 4 do redis.call('PEXPIRE', KEYS[k], tw) end
  end
end

local rreset, treset = 0, 0
if rl > 0 then
  local e = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  if #e > 0 then rreset = tonumber(e[2]) + rw - now end
end
if tl > 0 then
  local e = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
  if #e > 0 then treset = tonumber(e[2]) + tw - now end
end
return {ok, never, wait, rused, rreset, tused, treset}
`)

// reconcileScript sets a reservation's tokens to what the call used.
// KEYS: tokens costs, tokens sum. ARGV: id, used. Returns 1, or 0 when the entry is gone.
var reconcileScript = redis.NewScript(`
local old = redis.call('HGET', KEYS[1], ARGV[1])
if not old then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('INCRBY', KEYS[2], tonumber(ARGV[2]) - tonumber(old))
return 1
`)

// releaseScript removes a reservation from both logs: a call another limit refused.
// KEYS: requests log, tokens log, tokens costs, tokens sum. ARGV: id. Returns 1.
var releaseScript = redis.NewScript(`
redis.call('ZREM', KEYS[1], ARGV[1])
local c = redis.call('HGET', KEYS[3], ARGV[1])
if c then
  redis.call('HDEL', KEYS[3], ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('DECRBY', KEYS[4], c)
end
return 1
`)

// createKeyScript stores a record under its id and hash unless either is taken.
// KEYS: by-id, by-hash. ARGV: id, hash, record. Returns 1, or 0 when taken.
var createKeyScript = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 or redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1
`)

// getKeyScript returns the record of an id, or nil.
// KEYS: by-id, by-hash. ARGV: id.
var getKeyScript = redis.NewScript(`
local h = redis.call('HGET', KEYS[1], ARGV[1])
if not h then return false end
return redis.call('HGET', KEYS[2], h)
`)

// updateKeyScript replaces a record if it is still the one read (compare and set).
// KEYS: by-id, by-hash. ARGV: id, old record, new record.
// Returns 1, 0 when it changed meanwhile, -1 when the id is gone.
var updateKeyScript = redis.NewScript(`
local h = redis.call('HGET', KEYS[1], ARGV[1])
if not h then return -1 end
if redis.call('HGET', KEYS[2], h) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[2], h, ARGV[3])
return 1
`)

// deleteKeyScript removes an id and its record; returns the hash, or nil.
// KEYS: by-id, by-hash. ARGV: id.
var deleteKeyScript = redis.NewScript(`
local h = redis.call('HGET', KEYS[1], ARGV[1])
if not h then return false end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], h)
return h
`)
