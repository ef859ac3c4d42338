package runs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/uistream"
)

// Options configure a Manager. Zero fields take the defaults.
type Options struct {
	// Store keeps the runs for every replica (nil: in memory, one replica).
	Store Store
	// FlushInterval is the most often a run writes to the Store (runs.flush_interval, 50ms).
	FlushInterval time.Duration
	// TTL keeps a run's frames after its end (runs.ttl, 24h).
	TTL time.Duration
	// Lease is how long a run survives its replica's silence (10s); renewed every Lease/3.
	Lease time.Duration
	// MaxFrames is the length cap of a run's log (20000): resuming before it is an error.
	MaxFrames int
	// Window is how many recent frames a replica keeps per run for its connections (512);
	// a connection behind it reads from the Store.
	Window int
	// MaxLag ends a connection that falls this many frames behind the live end (4096): it
	// may resume from its last frame.
	MaxLag int
	// MaxRounds caps a run's rounds (runs.max_rounds, 128).
	MaxRounds int
	// FailOpen is redis.on_failure: open: when the Store cannot take a new run, the run is
	// kept in this replica's memory and served to the connection that asked (it cannot be
	// resumed elsewhere) instead of being refused.
	FailOpen bool
	Log      *slog.Logger
}

// Manager runs this replica's runs and serves every run to its connections. Safe for
// concurrent use. Close stops the runs (each ends with an error its readers see) and waits for
// every goroutine it started.
type Manager struct {
	o      Options
	id     string  // this replica, in owner tokens
	memory *Memory // where runs go while the Store is down, under FailOpen

	mu     sync.Mutex
	runs   map[string]*Run  // runs this replica owns, by run id, until their last write
	tails  map[string]*tail // runs of other replicas that connections here read, by run id
	closed bool
	wg     sync.WaitGroup
}

// NewManager returns a manager with o's defaults filled.
func NewManager(o Options) *Manager {
	if o.Store == nil {
		o.Store = NewMemory()
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.FlushInterval, 50*time.Millisecond)
	def(&o.TTL, 24*time.Hour)
	def(&o.Lease, 10*time.Second)
	if o.MaxFrames <= 0 {
		o.MaxFrames = 20000
	}
	if o.Window <= 0 {
		o.Window = 512
	}
	if o.MaxLag <= 0 {
		o.MaxLag = 4096
	}
	if o.MaxRounds <= 0 {
		o.MaxRounds = 128
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Manager{o: o, id: randomID(""), memory: NewMemory(), runs: map[string]*Run{}, tails: map[string]*tail{}}
}

func randomID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// Start claims the chat for a new run and starts it; the run goes on whatever happens to ctx
// (its values are kept: trace context). It returns the run and a reader of it from its first
// frame, for the connection that asked.
func (m *Manager) Start(ctx context.Context, sp Spec) (*Run, *Reader, error) {
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return nil, nil, &llm.Error{Kind: llm.Unavailable, Status: 503, Type: "server_error", Code: "shutting_down",
			Message: "The gateway replica is shutting down; retry."}
	}
	id := randomID("run_")
	if sp.MessageID == "" {
		sp.MessageID = randomID("msg_")
	}
	r := &Run{m: m, sp: sp, id: id, owner: m.id + "/" + id, feed: newFeed(m.o.Window, m.o.MaxFrames, 0),
		dirty: make(chan struct{}, 1), ended: make(chan struct{})}
	r.enc = uistream.NewEncoder(sp.Version, id, 0, r.emit)
	meta := Meta{Chat: sp.Chat, Run: id, Key: sp.Key, Proto: sp.Version.String()}
	r.store = m.o.Store
	if err := r.store.Claim(ctx, meta, r.owner, m.o.Lease, m.o.TTL); err != nil {
		if errors.Is(err, ErrBusy) || !m.o.FailOpen {
			return nil, nil, err
		}
		m.o.Log.Warn("run kept in memory: its store is unavailable", "run", id, "err", err.Error())
		r.store = m.memory
		_ = r.store.Claim(ctx, meta, r.owner, m.o.Lease, m.o.TTL)
	}
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	r.cancel = cancel
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		r.cancel(errShutdown)
	} else {
		m.runs[id] = r
		m.mu.Unlock()
	}
	m.wg.Add(2)
	go func() {
		defer m.wg.Done()
		r.loop(runCtx)
	}()
	go func() {
		defer m.wg.Done()
		defer m.forget(r)
		r.keep()
	}()
	return r, &Reader{m: m, chat: sp.Chat, run: id, feed: r.feed, live: true}, nil
}

func (m *Manager) forget(r *Run) {
	r.cancel(nil)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runs[r.id] == r {
		delete(m.runs, r.id)
	}
}

func (m *Manager) local(run string) *Run {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.runs[run]
}

// lookup finds the chat's current run and checks that the caller's key owns it.
func (m *Manager) lookup(ctx context.Context, chat, key string) (*Meta, error) {
	meta, err := m.o.Store.Lookup(ctx, chat)
	if err != nil {
		return nil, err
	}
	if meta == nil {
		return nil, ErrNoRun
	}
	if meta.Key != key {
		return nil, ErrNotFound
	}
	return meta, nil
}

// Stop stops the chat's active run (its upstream call in flight is canceled; it ends with
// abort) and returns its id. The run may be on another replica: it learns of the stop at its
// next write.
func (m *Manager) Stop(ctx context.Context, chat, key string) (string, error) {
	meta, err := m.lookup(ctx, chat, key)
	if err != nil {
		return "", err
	}
	if meta.Done {
		return "", ErrNoRun
	}
	if r := m.local(meta.Run); r != nil {
		r.cancel(errStopped)
		return meta.Run, nil
	}
	return meta.Run, m.o.Store.Stop(ctx, chat, meta.Run)
}

// Close stops the runs this replica owns, each ending with an error its readers see, ends
// its readers of other replicas' runs, waits for every goroutine, and closes the Store.
func (m *Manager) Close() error {
	m.shut(errShutdown)
	return m.o.Store.Close()
}

// Crash stops this replica's runs as a crash would: nothing more is written, not even their
// end, and their leases are no longer renewed. For tests of lease loss; the Store stays open.
func (m *Manager) Crash() {
	m.mu.Lock()
	for _, r := range m.runs {
		r.silent.Store(true)
	}
	m.mu.Unlock()
	m.shut(errLost)
}

func (m *Manager) shut(cause error) {
	m.mu.Lock()
	m.closed = true
	for _, r := range m.runs {
		r.cancel(cause)
	}
	for _, t := range m.tails {
		t.cancel()
	}
	m.mu.Unlock()
	m.wg.Wait()
}
