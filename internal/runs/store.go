package runs

import (
	"context"
	"errors"
	"time"
)

// Frame is one SSE frame of a run, whole ("id: <run>-<seq>\ndata: ...\n\n"); Seq counts from
// 1. Data is never modified once made.
type Frame struct {
	Seq  int64
	Data []byte
}

// Meta is what the Store knows of a chat's current run.
type Meta struct {
	Chat, Run string
	Key       string // id of the virtual key that started it ("" with auth off)
	Proto     string // the uistream version its frames are encoded in
	Seq       int64  // the last frame stored
	Done      bool   // its last frame is stored
	Stop      bool   // a stop was asked
	Lapsed    bool   // not done, and its owner's lease ran out
}

// First is the oldest frame still stored: older ones were trimmed by the length cap.
func (m *Meta) First(maxFrames int) int64 { return max(1, m.Seq-int64(maxFrames)+1) }

// Write is one batch a run's owner appends: the frames, a renewed lease, and whether they end
// the run. A write with no frames renews the lease only.
type Write struct {
	Chat, Run, Owner string
	Frames           []Frame
	Lease            time.Duration
	Done             bool
	// TTL keeps the run's keys this long after its last write; MaxFrames is the length cap.
	TTL       time.Duration
	MaxFrames int
}

// Verdict is what a write tells the owner.
type Verdict struct {
	Stop bool // someone asked to stop the run
	Lost bool // the run is no longer this owner's: reaped after its lease lapsed, or replaced
}

// Store keeps the chats' current runs and their frames, for every replica. Safe for
// concurrent use. Frames are stored with their Seq and read back exactly as written; a write
// skips frames already stored, so a retried batch is harmless.
type Store interface {
	// Claim makes m the chat's current run, owned by owner for lease. It fails with ErrBusy
	// when the chat's current run is active under another key; an active run of the same key
	// is replaced (its owner learns it is Lost at its next write).
	Claim(ctx context.Context, m Meta, owner string, lease, ttl time.Duration) error
	// Lookup returns the chat's current run; nil when there is none.
	Lookup(ctx context.Context, chat string) (*Meta, error)
	// Append writes a batch of the owner's run.
	Append(ctx context.Context, w Write) (Verdict, error)
	// Read returns up to max frames of the run after seq, without waiting.
	Read(ctx context.Context, chat, run string, after int64, max int) ([]Frame, error)
	// Wait returns the frames of the run after seq, waiting up to block for one to come
	// (none, nil: nothing came). Blocking reads use their own connections (DESIGN §10).
	Wait(ctx context.Context, chat, run string, after int64, block time.Duration) ([]Frame, error)
	// Stop asks the run's owner to stop it.
	Stop(ctx context.Context, chat, run string) error
	// Reap ends a run whose owner's lease lapsed with w's frames, if its last stored frame is
	// still seq and the lease still lapsed; false when someone else ended it meanwhile.
	Reap(ctx context.Context, w Write, seq int64) (bool, error)
	// Close releases the store's connections.
	Close() error
}

// Errors of the Manager, for the handlers to answer.
var (
	// ErrBusy: the chat's current run is active under another key (409).
	ErrBusy = errors.New("the chat has an active run of another key")
	// ErrNoRun: no run to resume or stop (204).
	ErrNoRun = errors.New("no active run")
	// ErrNotFound: the run belongs to another key (404, as if it did not exist).
	ErrNotFound = errors.New("run not found")
	// ErrTrimmed: the frames after the reader's cursor were trimmed by the length cap (410).
	ErrTrimmed = errors.New("the run's frames were trimmed")
	// ErrBehind ends a connection that fell further behind the live frames than the window
	// holds; the client may resume from its last event id.
	ErrBehind = errors.New("reader too far behind")
)
