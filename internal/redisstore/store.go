package redisstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// ErrUnavailable is in the chain of every failure to reach Redis that the caller must handle
// (under redis.on_failure: closed, or where no local answer exists); the error itself is an
// llm.Unavailable *llm.Error.
var ErrUnavailable = errors.New("redis unavailable")

// Options configure a Store. Exactly one of URL, Cluster and Sentinel is set.
type Options struct {
	// URL is one node: redis://, rediss:// or unix:// (go-redis's ParseURL).
	URL string
	// Cluster is a Redis Cluster (redis.cluster).
	Cluster *Cluster
	// Sentinel is a master and its replicas watched by Sentinel (redis.sentinel).
	Sentinel *Sentinel
	// FailOpen is redis.on_failure: open: serve on with local state while Redis is down.
	FailOpen bool
	// Timeout bounds every call (default 250ms).
	Timeout time.Duration
	// Spool bounds the records of the account kept while Redis is down (default
	// DefaultSpool), and, apart, those a master took and no replica confirmed yet
	// (confirm.go).
	Spool int
	Log   *slog.Logger
	// LogEvery is the least time between two log lines about failures (default 10s).
	LogEvery time.Duration
}

// probeEvery is how often the breaker asks a Redis that is down whether it is back.
const probeEvery = time.Second

// errDown is the failure of a call made while the breaker counts Redis as down: it failed
// at once, without reaching Redis.
var errDown = errors.New("down since an earlier call failed; a probe runs every second")

// Store is a connection to Redis and the failure policy, with a breaker (a call made while
// Redis is known to be down fails at once) and the spool of the account. Safe for
// concurrent use; Close releases it.
type Store struct {
	c        redis.UniversalClient
	form     form
	dial     func(pool int) redis.UniversalClient // another client on the same servers
	open     bool
	timeout  time.Duration
	log      *slog.Logger
	logEvery time.Duration
	br       *breaker
	spool    spool
	lonely   sync.Map // master address -> time.Time: until then, no WAIT (replicated)
	// unconfirmed are the writes a master took that no replica confirmed (confirm.go).
	unconfirmed unconfirmed

	failures    atomic.Int64
	waited      atomic.Int64 // calls that waited for the timeout
	probes      atomic.Int64
	retries     atomic.Int64 // calls run again after a broken connection
	lastLog     atomic.Int64 // unix nanoseconds of the last failure line
	lastDropLog atomic.Int64 // and of the last line about dropped records
	// lastForgotLog is that of the last line about unconfirmed writes forgotten.
	lastForgotLog atomic.Int64
}

var quietOnce sync.Once

// quiet silences go-redis's own logger, which prints a line per failed dial: a request flood
// during an outage. The Store counts and logs failures itself.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// New connects lazily: a Redis that is down at start is a failure like any other, under the
// same policy.
func New(o Options) (*Store, error) {
	if o.Timeout <= 0 {
		o.Timeout = 250 * time.Millisecond
	}
	if o.LogEvery <= 0 {
		o.LogEvery = 10 * time.Second
	}
	if o.Spool <= 0 {
		o.Spool = DefaultSpool
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	f, dial, err := dialer(o)
	if err != nil {
		return nil, err
	}
	quietOnce.Do(func() { redis.SetLogger(quiet{}) })
	s := &Store{c: dial(0), form: f, dial: dial, open: o.FailOpen, timeout: o.Timeout, log: o.Log,
		logEvery: o.LogEvery, spool: spool{max: o.Spool}, unconfirmed: unconfirmed{max: o.Spool}}
	s.br = newBreaker(probeEvery, s.probe, s.drain, s.changed)
	return s, nil
}

// Close stops the breaker's goroutine, writes what the spool holds if Redis answers (one
// failure ends that: it costs at most one timeout), logs what is dropped, and closes the
// connections.
func (s *Store) Close() error {
	s.br.close()
	if !s.drain(context.Background()) {
		for s.spool.len() > 0 {
			s.spool.pop()
			s.lose()
		}
		s.logDropped(true)
	}
	return s.c.Close()
}

// Ping reports whether Redis answers, for /readyz.
func (s *Store) Ping(ctx context.Context) error {
	return s.retry(ctx, func(ctx context.Context) error { return s.c.Ping(ctx).Err() })
}

// probe is the breaker's: a PING past the breaker. On a cluster it reloads the slot map
// and PINGs every master in it, then wants cluster_state:ok: a master killed is in the map
// until its replica took over, and go-redis does not reload the map on a refused
// connection by itself.
func (s *Store) probe(ctx context.Context) error {
	s.probes.Add(1)
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	cc, ok := s.c.(*redis.ClusterClient)
	if !ok {
		return s.c.Ping(ctx).Err()
	}
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return m.Ping(ctx).Err() })
	if err != nil {
		return err
	}
	info, err := cc.ClusterInfo(ctx).Result()
	if err == nil && !strings.Contains(info, "cluster_state:ok") {
		err = errors.New("cluster_state is not ok")
	}
	return err
}

// changed logs the breaker's moves; the first failure logs itself (result).
func (s *Store) changed(down bool) {
	telemetry.RedisBreaker(context.Background(), down)
	if !down {
		s.log.Info("redis is back", "failures", s.failures.Load(), "spooled", s.spool.len())
	}
}

// Failures is the number of failed calls since the start, those the breaker failed at once
// included.
func (s *Store) Failures() int64 { return s.failures.Load() }

// Waited is the number of calls that waited for the timeout (probes apart): with the
// breaker, about one per outage and replica.
func (s *Store) Waited() int64 { return s.waited.Load() }

// Retries is the number of calls run again after a broken connection, TRYAGAIN, or a MOVED or
// ASK that go-redis did not follow (retry).
func (s *Store) Retries() int64 { return s.retries.Load() }

// Probes is the number of probes the breaker made.
func (s *Store) Probes() int64 { return s.probes.Load() }

// FailOpen reports the policy: true for open.
func (s *Store) FailOpen() bool { return s.open }

// call runs fn with the per-call timeout and accounts for its outcome; while the breaker
// counts Redis as down, it fails at once.
func (s *Store) call(ctx context.Context, fn func(ctx context.Context) error) error {
	return s.callFor(ctx, s.timeout, fn)
}

// callFor is call with the timeout d (a blocking read's: its wait and the timeout).
func (s *Store) callFor(ctx context.Context, d time.Duration, fn func(ctx context.Context) error) error {
	return s.callAt(ctx, d, false, fn)
}

// retry is call for a call that is safe to run twice: a read, or a write whose id makes a
// second run count once. One that failed on a broken connection runs once more, at once,
// before the breaker trips. A connection Redis dropped under a command (a reset during a
// cluster's resharding) is a broken connection, not an outage: go-redis runs the command
// once more itself (MaxRetries 1), but its second attempt may meet another connection
// broken at the same moment, and then the breaker counted Redis down until its probe, a
// second of calls refused under on_failure: closed (issue 34).
func (s *Store) retry(ctx context.Context, fn func(ctx context.Context) error) error {
	return s.callAt(ctx, s.timeout, true, fn)
}

// callAt is call with the timeout d; again runs fn a second time after a broken
// connection, and again after TRYAGAIN, MOVED or ASK, within the same timeout (a hung Redis still costs
// one timeout, no more).
func (s *Store) callAt(ctx context.Context, d time.Duration, again bool, fn func(ctx context.Context) error) error {
	if s.br.isDown() {
		return s.fail(ctx, errDown)
	}
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	err := fn(cctx)
	if again && err != nil && broken(err) && cctx.Err() == nil {
		s.retries.Add(1)
		err = fn(cctx) // go-redis dropped the broken connection: another one, or a new dial
	}
	// TRYAGAIN is a multi-key call meeting a slot half moved by a resharding (some of its
	// keys migrated, some not yet): Redis asks to try again once the slot has moved. go-redis
	// does, three times within about 60 ms; redis-cli can take longer to move the rest of a
	// slot on a busy machine, and the breaker then refused a second of calls (380 of them
	// in one TestClusterReshard, issue 34). So a call safe to run twice tries again, backing
	// off from 10 ms, until its timeout.
	//
	// A MOVED or ASK that reaches the store is one that go-redis did not follow: its three
	// redirects were spent, the TRYAGAINs of the same moving slot included (280 calls
	// refused in one resharding run of the fleet suite). Redis ran nothing, so the same
	// loop serves it; go-redis reloads its slot map on a MOVED and follows the next one.
	for wait := 10 * time.Millisecond; again && err != nil && (redis.IsTryAgainError(err) || redirected(err)); wait *= 2 {
		if pause(cctx, wait) != nil {
			break
		}
		s.retries.Add(1)
		err = fn(cctx)
	}
	return s.result(ctx, err)
}

// pause waits d, or less if ctx ends first (its error then).
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// redirected reports whether err is a MOVED or ASK reply: a command Redis did not run.
func redirected(err error) bool {
	_, moved := redis.IsMovedError(err)
	_, ask := redis.IsAskError(err)
	return moved || ask
}

// broken reports whether err is a connection closed under a command (reset, broken pipe,
// EOF), or a cluster node's client closed under it (go-redis drops a node that left the slot
// map): not a timeout, which is a hung Redis, nor a dial refused, which is a dead one.
func broken(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, redis.ErrClosed)
}

// result classifies err: nil and redis.Nil (no such key) are answers; a call abandoned
// because the caller left is not Redis's failure; anything else is, counted and logged at
// most once per LogEvery, and wrapped in ErrUnavailable. A timeout or a connection error
// trips the breaker.
func (s *Store) result(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if isTimeout(err) {
		s.waited.Add(1)
	}
	if tripping(err) {
		s.br.trip()
		reload(s.c)
	}
	return s.fail(ctx, err)
}

// fail counts, logs and wraps a failed call.
func (s *Store) fail(ctx context.Context, err error) error {
	n := s.failures.Add(1)
	telemetry.RedisError(ctx)
	now, last := time.Now().UnixNano(), s.lastLog.Load()
	if now-last >= int64(s.logEvery) && s.lastLog.CompareAndSwap(last, now) {
		policy := "closed: refusing requests"
		if s.open {
			policy = "open: serving with local limits"
		}
		s.log.Warn("redis unavailable", "on_failure", policy, "failures", n, "err", err.Error())
	}
	return unavailable(err)
}

// unavailable is a failure to reach Redis as the rest of the gateway sees it: an
// llm.Unavailable error, so the handlers answer 503 without knowing the store. Its text says
// no more than that (the address stays in the store's own log line); its chain has
// ErrUnavailable and the client's error.
func unavailable(err error) error {
	return &llm.Error{Kind: llm.Unavailable, Status: http.StatusServiceUnavailable, Code: "redis_unavailable",
		Type: "server_error", Message: "the gateway cannot reach its shared state (Redis)",
		Err: fmt.Errorf("%w: %w", ErrUnavailable, err)}
}

// reload asks a cluster client for a new slot map (in the background, at most one at a
// time): after a failover or a resharding the old one names a node that is gone.
func reload(c redis.UniversalClient) {
	if cc, ok := c.(*redis.ClusterClient); ok {
		cc.ReloadState(context.Background())
	}
}

// outageReplies are the prefixes of the error replies that mean an outage (tripping).
var outageReplies = []string{"LOADING ", "BUSY ", "OOM ", "MASTERDOWN ", "READONLY ", "CLUSTERDOWN ",
	"TRYAGAIN ", "MOVED ", "ASK "}

// isDown reports whether Redis counts as down (the breaker is open).
func (s *Store) isDown() bool { return s.br.isDown() }

// isTimeout reports whether a call waited for its timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout()) || errors.Is(err, redis.ErrPoolTimeout)
}

// tripping reports whether err means Redis cannot answer now: anything but Redis's own
// answer, and the answers of a Redis that is loading, busy (a script running), out of memory
// or without a master, a replica promoted or demoted under the client (READONLY), and a
// cluster failing over or resharding past what go-redis follows by itself (CLUSTERDOWN,
// TRYAGAIN, a MOVED or ASK beyond its redirects). A write that met one is spooled, not
// dropped: its id makes the second attempt count once.
func tripping(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return true
	}
	for _, p := range outageReplies {
		if strings.HasPrefix(re.Error(), p) {
			return true
		}
	}
	return false
}
