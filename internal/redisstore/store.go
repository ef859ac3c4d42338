package redisstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/sluice-gw/sluice/internal/telemetry"
)

// ErrUnavailable wraps every failure to reach Redis that the caller must handle (under
// redis.on_failure: closed, or where no local answer exists).
var ErrUnavailable = errors.New("redis unavailable")

// Options configure a Store.
type Options struct {
	// URL is redis://, rediss:// or unix:// (go-redis's ParseURL).
	URL string
	// FailOpen is redis.on_failure: open: serve on with local state while Redis is down.
	FailOpen bool
	// Timeout bounds every call (default 250ms).
	Timeout time.Duration
	Log     *slog.Logger
	// LogEvery is the least time between two log lines about failures (default 10s).
	LogEvery time.Duration
}

// Store is a connection to Redis and the failure policy. Safe for concurrent use; Close
// releases it.
type Store struct {
	c        *redis.Client
	open     bool
	timeout  time.Duration
	log      *slog.Logger
	logEvery time.Duration

	failures atomic.Int64
	lastLog  atomic.Int64 // unix nanoseconds of the last failure line
	down     atomic.Bool
}

var quietOnce sync.Once

// quiet silences go-redis's own logger, which prints a line per failed dial: a request flood
// during an outage. The Store counts and logs failures itself.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// New connects lazily: a Redis that is down at start is a failure like any other, under the
// same policy.
func New(o Options) (*Store, error) {
	opt, err := redis.ParseURL(o.URL)
	if err != nil {
		// Not err itself: it may quote the URL, password included.
		return nil, errors.New("redis.url: not a valid redis:// or unix:// URL")
	}
	if o.Timeout <= 0 {
		o.Timeout = 250 * time.Millisecond
	}
	if o.LogEvery <= 0 {
		o.LogEvery = 10 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	quietOnce.Do(func() { redis.SetLogger(quiet{}) })
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout, opt.PoolTimeout = o.Timeout, o.Timeout, o.Timeout, o.Timeout
	opt.ContextTimeoutEnabled = true
	// One dial per attempt and one retry (a pooled connection broken by a Redis restart):
	// the timeout, not retries, bounds a call.
	opt.DialerRetries, opt.MaxRetries = 1, 1
	opt.Protocol = 2
	opt.DisableIdentity = true
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return &Store{c: redis.NewClient(opt), open: o.FailOpen, timeout: o.Timeout, log: o.Log, logEvery: o.LogEvery}, nil
}

// Close closes the connections.
func (s *Store) Close() error { return s.c.Close() }

// Ping reports whether Redis answers, for /readyz.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return s.result(ctx, s.c.Ping(ctx).Err())
}

// Failures is the number of failed calls since the start.
func (s *Store) Failures() int64 { return s.failures.Load() }

// FailOpen reports the policy: true for open.
func (s *Store) FailOpen() bool { return s.open }

// call runs fn with the per-call timeout and accounts for its outcome.
func (s *Store) call(ctx context.Context, fn func(ctx context.Context) error) error {
	cctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return s.result(ctx, fn(cctx))
}

// result classifies err: nil and redis.Nil (no such key) are answers; a call abandoned
// because the caller left is not Redis's failure; anything else is, counted and logged at
// most once per LogEvery, and wrapped in ErrUnavailable.
func (s *Store) result(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		if s.down.Swap(false) {
			s.log.Info("redis is back", "failures", s.failures.Load())
		}
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	n := s.failures.Add(1)
	s.down.Store(true)
	telemetry.RedisError(ctx)
	now, last := time.Now().UnixNano(), s.lastLog.Load()
	if now-last >= int64(s.logEvery) && s.lastLog.CompareAndSwap(last, now) {
		policy := "closed: refusing requests"
		if s.open {
			policy = "open: serving with local limits"
		}
		s.log.Warn("redis unavailable", "on_failure", policy, "failures", n, "err", err.Error())
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// isDown reports whether the last call failed.
func (s *Store) isDown() bool { return s.down.Load() }
