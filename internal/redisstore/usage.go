package redisstore

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sluice-gw/sluice/internal/usage"
)

// Usage is a usage.Store in Redis: one hash per UTC day, sluice:{usage:<day>}, whose fields
// are a row's labels and one counter, "<key>\x1f<alias>\x1f<target>\x1f<counter>", or
// "<key>\x1f<alias>\x1f<target>\x1f<team>\x1f<counter>" for a key with a team (the older
// form stays the one of rows without a team, so the days written before teams read alike), added to
// with HINCRBY, so every replica adds to the same rows. A day expires after
// usage.Retention. A record Redis cannot take is spooled and written once it answers
// (spool.go), exactly once: each record has an id, remembered for recordTTL by the script
// that adds it. The answer has left already: the account never fails a request.
type Usage struct{ s *Store }

var _ usage.Store = (*Usage)(nil)

// Usage returns the account.
func (s *Store) Usage() *Usage { return &Usage{s: s} }

const sep = "\x1f"

func usageKey(day string) string { return "sluice:{usage:" + day + "}" }

// counters name the fields of a row; the order is Counts'. A counter added later (the cache
// writes and savings of issue 46) is a new field: the rows written before it read as zero.
var counters = [...]string{"requests", "input_tokens", "output_tokens", "cached_tokens", "cost_nano", "errors", "fallbacks", "estimated", "cache_hits", "saved_tokens",
	"cache_write_tokens", "cache_write_1h_tokens", "saved_nano"}

func values(c *usage.Counts) [len(counters)]*int64 {
	return [...]*int64{&c.Requests, &c.InputTokens, &c.OutputTokens, &c.CachedTokens, &c.CostNano, &c.Errors, &c.Fallbacks, &c.Estimated, &c.CacheHits, &c.SavedTokens,
		&c.CacheWriteTokens, &c.CacheWrite1hTokens, &c.SavedNano}
}

// label keeps a label from breaking the field format.
func label(s string) string { return strings.ReplaceAll(s, sep, " ") }

// addUsageScript adds one record to a day's rows, unless its id was seen; then it renews
// the id's TTL instead: a run that writes nothing would move no replication offset, and a
// WAIT after it would confirm nothing (confirm.go writes records again to confirm them).
// KEYS: the day, the record's id. ARGV: retention s, id TTL s, then field, amount pairs.
// Returns 1, or 0 for a record already added.
var addUsageScript = redis.NewScript(`
if not redis.call('SET', KEYS[2], 1, 'NX', 'EX', ARGV[2]) then
  redis.call('EXPIRE', KEYS[2], ARGV[2])
  return 0
end
for i = 3, #ARGV, 2 do redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
`)

// Add implements usage.Store, in one script: a row is never half added, nor added twice,
// nor a record of the caller's id (usage.WithRecord) twice. A record Redis cannot take is
// spooled (no error); an error means it is lost.
func (u *Usage) Add(ctx context.Context, day string, l usage.Labels, c usage.Counts) error {
	prefix := label(l.Key) + sep + label(l.Alias) + sep + label(l.Target) + sep
	if l.Team != "" {
		prefix += label(l.Team) + sep
	}
	k := usageKey(day)
	args := []any{int64(usage.Retention / time.Second), recordTTL}
	for i, v := range values(&c) {
		if *v != 0 || i == 0 {
			args = append(args, prefix+counters[i], *v)
		}
	}
	id := newID()
	if r := usage.RecordOf(ctx); r != "" {
		id = "w:" + r // the caller's record (usage.WithRecord): added once
	}
	return u.s.apply(ctx, write{script: addUsageScript, keys: []string{k, k + ":r:" + id}, args: args, idem: true})
}

// Rows implements usage.Store: one HGETALL per day, pipelined.
func (u *Usage) Rows(ctx context.Context, days []string, fn func(day string, r usage.Row)) error {
	var cmds []*redis.MapStringStringCmd
	err := u.s.retry(ctx, func(ctx context.Context) error {
		var err error
		cmds = cmds[:0]
		_, err = u.s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, d := range days {
				cmds = append(cmds, p.HGetAll(ctx, usageKey(d)))
			}
			return nil
		})
		return err
	})
	if err != nil {
		return err
	}
	for i, cmd := range cmds {
		rows := map[usage.Labels]*usage.Counts{}
		var order []usage.Labels
		for field, v := range cmd.Val() {
			parts := strings.Split(field, sep)
			n, err := strconv.ParseInt(v, 10, 64)
			if len(parts) != 4 && len(parts) != 5 || err != nil {
				continue // not a field of this format: ignored
			}
			l := usage.Labels{Key: parts[0], Alias: parts[1], Target: parts[2]}
			if len(parts) == 5 {
				l.Team = parts[3]
			}
			c := rows[l]
			if c == nil {
				c = &usage.Counts{}
				rows[l] = c
				order = append(order, l)
			}
			for j, name := range counters {
				if name == parts[len(parts)-1] {
					*values(c)[j] += n
				}
			}
		}
		for _, l := range order {
			fn(days[i], usage.Row{Labels: l, Counts: *rows[l]})
		}
	}
	return nil
}
