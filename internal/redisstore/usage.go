package redisstore

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/sluice-gw/sluice/internal/usage"
)

// Usage is a usage.Store in Redis: one hash per UTC day, sluice:{usage:<day>}, whose fields
// are a row's labels and one counter, "<key>\x1f<alias>\x1f<target>\x1f<counter>", added to
// with HINCRBY, so every replica adds to the same rows. A day expires after
// usage.Retention. A row Redis cannot take is lost (counted and logged as a Redis failure):
// the answer has left already, and the account is not worth failing a request for.
type Usage struct{ s *Store }

var _ usage.Store = (*Usage)(nil)

// Usage returns the account.
func (s *Store) Usage() *Usage { return &Usage{s: s} }

const sep = "\x1f"

func usageKey(day string) string { return "sluice:{usage:" + day + "}" }

// counters name the fields of a row; the order is Counts'.
var counters = [...]string{"requests", "input_tokens", "output_tokens", "cached_tokens", "cost_nano", "errors", "fallbacks", "estimated"}

func values(c *usage.Counts) [len(counters)]*int64 {
	return [...]*int64{&c.Requests, &c.InputTokens, &c.OutputTokens, &c.CachedTokens, &c.CostNano, &c.Errors, &c.Fallbacks, &c.Estimated}
}

// label keeps a label from breaking the field format.
func label(s string) string { return strings.ReplaceAll(s, sep, " ") }

// Add implements usage.Store, in one transaction: a row is never half added.
func (u *Usage) Add(ctx context.Context, day string, l usage.Labels, c usage.Counts) error {
	prefix := label(l.Key) + sep + label(l.Alias) + sep + label(l.Target) + sep
	k := usageKey(day)
	return u.s.call(ctx, func(ctx context.Context) error {
		_, err := u.s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for i, v := range values(&c) {
				if *v != 0 || i == 0 {
					p.HIncrBy(ctx, k, prefix+counters[i], *v)
				}
			}
			p.Expire(ctx, k, usage.Retention)
			return nil
		})
		return err
	})
}

// Rows implements usage.Store: one HGETALL per day, pipelined.
func (u *Usage) Rows(ctx context.Context, days []string, fn func(day string, r usage.Row)) error {
	var cmds []*redis.MapStringStringCmd
	err := u.s.call(ctx, func(ctx context.Context) error {
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
			if len(parts) != 4 || err != nil {
				continue // not a field of this format: ignored
			}
			l := usage.Labels{Key: parts[0], Alias: parts[1], Target: parts[2]}
			c := rows[l]
			if c == nil {
				c = &usage.Counts{}
				rows[l] = c
				order = append(order, l)
			}
			for j, name := range counters {
				if name == parts[3] {
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
