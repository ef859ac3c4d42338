package redisstore

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// The replicas' statistics for GET /admin/stats (package telemetry encodes them): each
// replica SETs its snapshot under its own key with a TTL and indexes it in a sorted set
// scored by the time it wrote; a reader takes the recent members and MGETs their
// snapshots. Two keys per replica and two round trips per read; nothing per request.
//
//	sluice:{stats}:replicas      zset   replica -> unix ms of its last snapshot
//	sluice:{stats}:r:<replica>   string its snapshot (JSON), expiring after the window
const statsIndex = "sluice:{stats}:replicas"

func statsKey(replica string) string { return "sluice:{stats}:r:" + replica }

// PublishStats stores replica's snapshot for ttl, and drops from the index the replicas
// that stopped writing longer ago than that.
func (s *Store) PublishStats(ctx context.Context, replica string, snapshot []byte, ttl time.Duration) error {
	return s.call(ctx, func(ctx context.Context) error {
		now := time.Now().UnixMilli()
		_, err := s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, statsKey(replica), snapshot, ttl)
			p.ZAdd(ctx, statsIndex, redis.Z{Score: float64(now), Member: replica})
			p.ZRemRangeByScore(ctx, statsIndex, "-inf", "("+strconv.FormatInt(now-ttl.Milliseconds(), 10))
			p.Expire(ctx, statsIndex, ttl)
			return nil
		})
		return err
	})
}

// FleetStats returns the snapshots of the replicas that wrote within maxAge (its own
// included), in no particular order.
func (s *Store) FleetStats(ctx context.Context, maxAge time.Duration) ([][]byte, error) {
	var out [][]byte
	err := s.retry(ctx, func(ctx context.Context) error {
		out = out[:0]
		since := strconv.FormatInt(time.Now().Add(-maxAge).UnixMilli(), 10)
		ids, err := s.c.ZRangeArgs(ctx, redis.ZRangeArgs{Key: statsIndex, ByScore: true, Start: since, Stop: "+inf"}).Result()
		if err != nil || len(ids) == 0 {
			return err
		}
		keys := make([]string, len(ids))
		for i, id := range ids {
			keys[i] = statsKey(id)
		}
		vals, err := s.c.MGet(ctx, keys...).Result()
		for _, v := range vals {
			if str, ok := v.(string); ok {
				out = append(out, []byte(str))
			}
		}
		return err
	})
	return out, err
}
