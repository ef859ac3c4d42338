package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// StatsStore shares the replicas' statistics (redisstore.Store): each replica writes its
// snapshot, any replica reads them all.
type StatsStore interface {
	// PublishStats stores replica's snapshot (JSON) for ttl.
	PublishStats(ctx context.Context, replica string, snapshot []byte, ttl time.Duration) error
	// FleetStats returns the snapshots of the replicas that published within maxAge.
	FleetStats(ctx context.Context, maxAge time.Duration) ([][]byte, error)
}

// statsEvery is how often, at most, a replica with traffic publishes its snapshot.
const statsEvery = 5 * time.Second

// fleetStats publishes this replica's statistics a few seconds after traffic, at most once
// per interval and never while idle: no goroutine of its own, only a timer armed by
// traffic. Reads merge the other replicas' snapshots with this one's live statistics.
type fleetStats struct {
	store   StatsStore
	stats   *telemetry.Stats
	replica string
	ttl     time.Duration
	every   time.Duration
	tel     *telemetry.Telemetry

	armed    atomic.Bool
	mu       sync.Mutex
	timer    *time.Timer
	closed   bool
	inflight sync.WaitGroup
}

func newFleetStats(store StatsStore, tel *telemetry.Telemetry, window time.Duration) *fleetStats {
	host, _ := os.Hostname()
	var b [3]byte
	_, _ = rand.Read(b[:])
	// Unique per process and per server: a restarted replica does not overwrite the minutes
	// its predecessor published (they age out with their key).
	return &fleetStats{store: store, stats: tel.Stats(), replica: host + "-" + hex.EncodeToString(b[:]),
		ttl: window + time.Minute, every: statsEvery, tel: tel}
}

// touch arms the next publish, if none is armed.
func (f *fleetStats) touch() {
	if !f.armed.CompareAndSwap(false, true) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.timer = time.AfterFunc(f.every, f.publish)
	}
}

// publish writes the snapshot; runs on the timer's goroutine. A failure is the store's to
// count and log (redis.on_failure); the next traffic tries again.
func (f *fleetStats) publish() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.inflight.Add(1)
	f.mu.Unlock()
	defer f.inflight.Done()
	f.armed.Store(false) // traffic from now on arms the next publish
	b, err := json.Marshal(f.stats.Snapshot(f.replica))
	if err != nil {
		return
	}
	// The context carries the server's Telemetry: a Redis error while publishing counts there.
	_ = f.store.PublishStats(f.tel.Context(context.Background()), f.replica, b, f.ttl)
}

// close stops publishing and waits for a publish in flight: the store closes next.
func (f *fleetStats) close() {
	f.mu.Lock()
	f.closed = true
	if f.timer != nil {
		f.timer.Stop()
	}
	f.mu.Unlock()
	f.inflight.Wait()
}

// adminStats serves GET /admin/stats?minutes=N: per alias and served target over the last N
// minutes (default and maximum: telemetry.stats_window), every replica's when Redis is
// configured. With Redis unreachable it answers for this replica alone, and says so.
func (s *Server) adminStats(c echo.Context) error {
	window := int(s.obs.window / time.Minute)
	minutes := window
	if q := c.QueryParam("minutes"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 1 || n > window {
			return s.reject(c, &llm.Error{Kind: llm.Invalid, Param: "minutes", Type: "invalid_request_error",
				Message: "minutes must be a whole number from 1 to " + strconv.Itoa(window) + " (telemetry.stats_window)."})
		}
		minutes = n
	}
	own := "local"
	if f := s.obs.fleet; f != nil {
		own = f.replica
	}
	snaps := []telemetry.Snapshot{s.obs.tel.Stats().Snapshot(own)}
	partial := false
	if f := s.obs.fleet; f != nil {
		raw, err := f.store.FleetStats(c.Request().Context(), f.ttl)
		partial = err != nil
		for _, b := range raw {
			var sn telemetry.Snapshot
			if json.Unmarshal(b, &sn) == nil && sn.Replica != own {
				snaps = append(snaps, sn)
			}
		}
	}
	rep := telemetry.Merge(time.Now(), minutes, snaps)
	rep.Partial = partial
	return c.JSON(http.StatusOK, rep)
}
