package redisstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sluice-gw/sluice/internal/runs"
)

// RunLog is a runs.Store in Redis: every replica can resume, tail and stop every run.
//
//	sluice:{chat:<chat>}          hash    the chat's current run: run, key, proto, owner,
//	                                      lease (ms, Redis's clock), seq, done, stop
//	sluice:{chat:<chat>}:<run>    stream  the run's frames, entry id <seq>-0, field f
//
// Both keys share the chat's hash tag, so each script touches one slot. Every write renews
// their TTL, so they outlive the run's last write by runs.ttl. Blocking reads (XREAD BLOCK)
// use a client of their own, made at the first one, so they never starve the pool of the
// short calls (DESIGN §10), on a cluster and under Sentinel too. Safe for concurrent use.
type RunLog struct {
	s *Store

	mu    sync.Mutex
	block redis.UniversalClient
}

var _ runs.Store = (*RunLog)(nil)

// RunLog returns the run log on this Store's connection. Close it before the Store.
func (s *Store) RunLog() *RunLog { return &RunLog{s: s} }

func chatKey(chat string) string        { return "sluice:{chat:" + chat + "}" }
func framesKey(chat, run string) string { return chatKey(chat) + ":" + run }

// claimScript: KEYS: chat. ARGV: run, key, proto, owner, lease ms, ttl ms. 0: busy.
var claimScript = redis.NewScript(luaNow + `
local now = nowms()
local cur = redis.call('HMGET', KEYS[1], 'run', 'key', 'done', 'lease')
if cur[1] and cur[3] == '0' and tonumber(cur[4]) > now and cur[2] ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'run', ARGV[1], 'key', ARGV[2], 'proto', ARGV[3], 'owner', ARGV[4],
  'lease', now + tonumber(ARGV[5]), 'seq', 0, 'done', 0, 'stop', 0)
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return 1
`)

// lookupScript: KEYS: chat. Returns run, key, proto, seq, done, stop, lapsed; nil: none.
var lookupScript = redis.NewScript(luaNow + `
local m = redis.call('HMGET', KEYS[1], 'run', 'key', 'proto', 'seq', 'done', 'stop', 'lease')
if not m[1] then return false end
local lapsed = '0'
if m[5] == '0' and tonumber(m[7]) <= nowms() then lapsed = '1' end
return {m[1], m[2], m[3], m[4], m[5], m[6], lapsed}
`)

// luaAppend adds the frames in ARGV[first..] (seq, data pairs) that the stream lacks, capped
// at ARGV[cap] entries, and returns the last seq.
const luaAppend = `
local function append(seq, first, cap)
  for i = first, #ARGV, 2 do
    local s = tonumber(ARGV[i])
    if s > seq then
      redis.call('XADD', KEYS[2], 'MAXLEN', cap, s .. '-0', 'f', ARGV[i + 1])
      seq = s
    end
  end
  return seq
end
`

// appendScript: KEYS: chat, frames. ARGV: run, owner, lease ms, done (0|1), ttl ms, cap,
// then seq, data pairs. Returns {lost, stop}.
var appendScript = redis.NewScript(luaNow + luaAppend + `
local m = redis.call('HMGET', KEYS[1], 'run', 'owner', 'done', 'seq', 'stop')
if m[1] ~= ARGV[1] or m[2] ~= ARGV[2] or m[3] ~= '0' then return {1, 0} end
local seq = append(tonumber(m[4]), 7, ARGV[6])
redis.call('HSET', KEYS[1], 'seq', seq, 'lease', nowms() + tonumber(ARGV[3]), 'done', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return {0, tonumber(m[5])}
`)

// reapScript: KEYS: chat, frames. ARGV: run, seq, ttl ms, cap, then seq, data pairs. Ends
// the run if its last frame is still seq and its lease lapsed. Returns 1 if it did.
var reapScript = redis.NewScript(luaNow + luaAppend + `
local m = redis.call('HMGET', KEYS[1], 'run', 'done', 'seq', 'lease')
if m[1] ~= ARGV[1] or m[2] ~= '0' or tonumber(m[3]) ~= tonumber(ARGV[2]) or tonumber(m[4]) > nowms() then return 0 end
local seq = append(tonumber(m[3]), 5, ARGV[4])
redis.call('HSET', KEYS[1], 'seq', seq, 'done', 1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
`)

// stopScript: KEYS: chat. ARGV: run.
var stopScript = redis.NewScript(`
local m = redis.call('HMGET', KEYS[1], 'run', 'done')
if m[1] == ARGV[1] and m[2] == '0' then redis.call('HSET', KEYS[1], 'stop', 1) end
return 0
`)

func (l *RunLog) Claim(ctx context.Context, m runs.Meta, owner string, lease, ttl time.Duration) error {
	var ok int64
	err := l.s.call(ctx, func(ctx context.Context) (err error) {
		ok, err = claimScript.Run(ctx, l.s.c, []string{chatKey(m.Chat)}, m.Run, m.Key, m.Proto, owner,
			lease.Milliseconds(), ttl.Milliseconds()).Int64()
		return err
	})
	if err == nil && ok == 0 {
		return runs.ErrBusy
	}
	return err
}

func (l *RunLog) Lookup(ctx context.Context, chat string) (*runs.Meta, error) {
	var v []string
	err := l.s.call(ctx, func(ctx context.Context) (err error) {
		v, err = lookupScript.Run(ctx, l.s.c, []string{chatKey(chat)}).StringSlice()
		return err
	})
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(v) != 7 {
		return nil, errors.New("redisstore: malformed run record")
	}
	seq, _ := strconv.ParseInt(v[3], 10, 64)
	return &runs.Meta{Chat: chat, Run: v[0], Key: v[1], Proto: v[2], Seq: seq, Done: v[4] == "1",
		Stop: v[5] == "1", Lapsed: v[6] == "1"}, nil
}

func frameArgs(args []any, frames []runs.Frame) []any {
	for _, f := range frames {
		args = append(args, f.Seq, f.Data)
	}
	return args
}

func (l *RunLog) Append(ctx context.Context, w runs.Write) (runs.Verdict, error) {
	done := 0
	if w.Done {
		done = 1
	}
	args := frameArgs([]any{w.Run, w.Owner, w.Lease.Milliseconds(), done, w.TTL.Milliseconds(), w.MaxFrames}, w.Frames)
	var v []int64
	err := l.s.call(ctx, func(ctx context.Context) (err error) {
		v, err = appendScript.Run(ctx, l.s.c, []string{chatKey(w.Chat), framesKey(w.Chat, w.Run)}, args...).Int64Slice()
		return err
	})
	if err != nil || len(v) != 2 {
		return runs.Verdict{}, err
	}
	return runs.Verdict{Lost: v[0] == 1, Stop: v[1] == 1}, nil
}

func (l *RunLog) Reap(ctx context.Context, w runs.Write, seq int64) (bool, error) {
	args := frameArgs([]any{w.Run, seq, w.TTL.Milliseconds(), w.MaxFrames}, w.Frames)
	var ok int64
	err := l.s.call(ctx, func(ctx context.Context) (err error) {
		ok, err = reapScript.Run(ctx, l.s.c, []string{chatKey(w.Chat), framesKey(w.Chat, w.Run)}, args...).Int64()
		return err
	})
	return ok == 1, err
}

func (l *RunLog) Stop(ctx context.Context, chat, run string) error {
	return l.s.call(ctx, func(ctx context.Context) error {
		return stopScript.Run(ctx, l.s.c, []string{chatKey(chat)}, run).Err()
	})
}

func (l *RunLog) Read(ctx context.Context, chat, run string, after int64, n int) ([]runs.Frame, error) {
	var xs []redis.XMessage
	err := l.s.call(ctx, func(ctx context.Context) (err error) {
		xs, err = l.s.c.XRangeN(ctx, framesKey(chat, run), strconv.FormatInt(after+1, 10)+"-0", "+", int64(n)).Result()
		return err
	})
	if err != nil {
		return nil, err
	}
	return frames(xs), nil
}

// Wait blocks on the run log's own client: a blocking read holds its connection for up to
// block.
func (l *RunLog) Wait(ctx context.Context, chat, run string, after int64, block time.Duration) ([]runs.Frame, error) {
	c := l.blocking()
	xs, err := c.XRead(ctx, &redis.XReadArgs{Streams: []string{framesKey(chat, run), strconv.FormatInt(after, 10) + "-0"},
		Count: 1024, Block: block}).Result()
	if err = l.s.result(ctx, err); err != nil {
		if errors.Is(err, ErrUnavailable) {
			reload(c)
		}
		if errors.Is(err, redis.Nil) {
			return nil, nil // nothing came within block
		}
		return nil, err
	}
	var out []runs.Frame
	for _, x := range xs {
		out = append(out, frames(x.Messages)...)
	}
	return out, nil
}

func (l *RunLog) blocking() redis.UniversalClient {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.block == nil {
		// One connection per run being tailed on this replica (per node of a cluster: the
		// cluster client routes each read to the master of its stream's slot); the read
		// deadline follows each command's block.
		l.block = l.s.dial(1024)
	}
	return l.block
}

func frames(xs []redis.XMessage) []runs.Frame {
	out := make([]runs.Frame, 0, len(xs))
	for _, x := range xs {
		head, _, _ := strings.Cut(x.ID, "-")
		seq, err := strconv.ParseInt(head, 10, 64)
		d, ok := x.Values["f"].(string)
		if err != nil || !ok {
			continue
		}
		out = append(out, runs.Frame{Seq: seq, Data: []byte(d)})
	}
	return out
}

// Close closes the blocking client; the Store's own connection is the Store's to close.
func (l *RunLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.block != nil {
		err := l.block.Close()
		l.block = nil
		return err
	}
	return nil
}
