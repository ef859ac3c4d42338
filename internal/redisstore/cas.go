package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"
)

// casTries bounds an update's rounds: 64 writers racing on one record is far beyond what
// the admin API sees, so running out means something keeps rewriting it.
const casTries = 64

// casUpdate is the compare-and-set update of one JSON record (a key's, a team's): get reads
// the record of id as stored and decoded, fn changes the decoded copy, and script writes the
// new record only if the stored one is still the one read. script runs with keys and ARGV
// (id, the record read, the new record) and returns 1 when it wrote, 0 when the record
// changed meanwhile (another replica's update: read again, after a short jittered back-off),
// -1 when the record is gone (gone is returned). An error of get or fn is returned as is.
// Redis Cluster: keys must share one hash tag, as every script of this package's.
func casUpdate[T any](ctx context.Context, s *Store, script *redis.Script, keys []string, id string,
	get func(ctx context.Context, id string) (string, T, error), fn func(T) error, gone error, what string) (T, error) {
	var zero T
	for try := range casTries {
		if try > 0 {
			// Another writer won the race: back off a little, with jitter, and read again.
			if err := pause(ctx, time.Duration(rand.Int64N(int64(time.Millisecond)*int64(min(try, 10))))); err != nil {
				return zero, err
			}
		}
		old, v, err := get(ctx, id)
		if err != nil {
			return zero, err
		}
		if err := fn(v); err != nil {
			return zero, err
		}
		rec, err := json.Marshal(v)
		if err != nil {
			return zero, err
		}
		var n int64
		err = s.call(ctx, func(ctx context.Context) (err error) {
			n, err = script.Run(ctx, s.c, keys, id, old, rec).Int64()
			return err
		})
		switch {
		case err != nil:
			return zero, err
		case n < 0:
			return zero, gone
		case n > 0:
			return v, nil
		}
	}
	return zero, errors.New("redisstore: the " + what + " kept changing during the update")
}
