package redisstore

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sluice-gw/sluice/internal/fallback"
)

// Samples is a fallback.SampleStore in Redis: what each replica learned of an alias's
// targets (issue 49), one small hash per alias, a field per replica, hash-tagged on the
// alias:
//
//	sluice:{route:<alias>}   hash   replica -> "<unix ms> <digest JSON>", expiring a minute
//	                                after its last write
//
// One exchange a second per replica, off the request path (fallback.Share): one pipeline
// that writes this replica's field of every alias and reads every alias's hash. Fields older
// than the ttl are skipped and deleted; a failure is counted and logged like any
// (Store.call), and the replica keeps routing on what it has.
type Samples struct{ s *Store }

var _ fallback.SampleStore = (*Samples)(nil)

// Samples returns the routing samples' store.
func (s *Store) Samples() *Samples { return &Samples{s: s} }

func samplesKey(alias string) string { return "sluice:{route:" + alias + "}" }

// samplesLife is how long an alias's hash outlives its last write.
const samplesLife = time.Minute

// Exchange implements fallback.SampleStore.
func (m *Samples) Exchange(ctx context.Context, replica string, mine map[string][]byte, ttl time.Duration) (map[string]map[string][]byte, error) {
	out := map[string]map[string][]byte{}
	err := m.s.retry(ctx, func(ctx context.Context) error { // an overwrite: safe to run twice
		clear(out)
		now := time.Now().UnixMilli()
		aliases := make([]string, 0, len(mine))
		reads := make([]*redis.MapStringStringCmd, 0, len(mine))
		_, err := m.s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for alias, b := range mine {
				k := samplesKey(alias)
				p.HSet(ctx, k, replica, strconv.FormatInt(now, 10)+" "+string(b))
				p.PExpire(ctx, k, samplesLife)
				aliases = append(aliases, alias)
				reads = append(reads, p.HGetAll(ctx, k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		var stale []string // "key\x00field"
		for i, alias := range aliases {
			for field, v := range reads[i].Val() {
				at, body, ok := strings.Cut(v, " ")
				ms, err := strconv.ParseInt(at, 10, 64)
				switch {
				case !ok || err != nil || now-ms > ttl.Milliseconds():
					stale = append(stale, samplesKey(alias)+"\x00"+field)
				case field != replica:
					if out[alias] == nil {
						out[alias] = map[string][]byte{}
					}
					out[alias][field] = []byte(body)
				}
			}
		}
		if len(stale) > 0 { // replicas gone: their fields leave with the next exchange's writes
			_, err = m.s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, kf := range stale {
					k, f, _ := strings.Cut(kf, "\x00")
					p.HDel(ctx, k, f)
				}
				return nil
			})
		}
		return err
	})
	return out, err
}
