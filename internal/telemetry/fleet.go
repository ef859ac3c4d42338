package telemetry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"sync"
	"sync/atomic"
	"time"
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

// Fleet publishes this replica's statistics a few seconds after traffic, at most once
// per interval and never while idle: no goroutine of its own, only a timer armed by
// traffic. Reads merge the other replicas' snapshots with this one's live statistics.
type Fleet struct {
	store   StatsStore
	stats   *Stats
	replica string
	ttl     time.Duration
	every   time.Duration
	tel     *Telemetry

	armed    atomic.Bool
	mu       sync.Mutex
	timer    *time.Timer
	closed   bool
	inflight sync.WaitGroup
}

// NewFleet shares tel's statistics of the last window through store.
func NewFleet(store StatsStore, tel *Telemetry, window time.Duration) *Fleet {
	host, _ := os.Hostname()
	var b [3]byte
	_, _ = rand.Read(b[:])
	// Unique per process and per server: a restarted replica does not overwrite the minutes
	// its predecessor published (they age out with their key).
	return &Fleet{store: store, stats: tel.Stats(), replica: host + "-" + hex.EncodeToString(b[:]),
		ttl: window + time.Minute, every: statsEvery, tel: tel}
}

// Touch arms the next publish, if none is armed: a model call was served.
func (f *Fleet) Touch() {
	if !f.armed.CompareAndSwap(false, true) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.timer = time.AfterFunc(f.every, f.Publish)
	}
}

// Publish writes the snapshot; runs on the timer's goroutine (tests call it). A failure is the store's to
// count and log (redis.on_failure); the next traffic tries again.
func (f *Fleet) Publish() {
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

// Close stops publishing and waits for a publish in flight: the store closes next.
func (f *Fleet) Close() {
	f.mu.Lock()
	f.closed = true
	if f.timer != nil {
		f.timer.Stop()
	}
	f.mu.Unlock()
	f.inflight.Wait()
}

// Report is the statistics over the last minutes of this replica and of every other that
// published within the window; Partial when the store could not be read.
func (f *Fleet) Report(ctx context.Context, minutes int) Report {
	snaps := []Snapshot{f.stats.Snapshot(f.replica)}
	raw, err := f.store.FleetStats(ctx, f.ttl)
	for _, b := range raw {
		var sn Snapshot
		if json.Unmarshal(b, &sn) == nil && sn.Replica != f.replica {
			snaps = append(snaps, sn)
		}
	}
	rep := Merge(time.Now(), minutes, snaps)
	rep.Partial = err != nil
	return rep
}
