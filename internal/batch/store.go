package batch

import (
	"context"
	"time"
)

// Store keeps the host's files and batches for every replica that shares it. Records and
// chunks are opaque bytes under ids the host makes unique ("file-…", "batch_…"); every
// write keeps what it writes for the store's retention. A failure is an llm.Unavailable
// error. Implementations are safe for concurrent use.
type Store interface {
	// PutChunk keeps chunk n of file's content; Chunk returns it (nil, nil: none);
	// DropChunks forgets chunks 0 to n-1.
	PutChunk(ctx context.Context, file string, n int, b []byte) error
	Chunk(ctx context.Context, file string, n int) ([]byte, error)
	DropChunks(ctx context.Context, file string, n int) error

	// Put keeps rec under id; Get returns it (nil, nil: none); Swap replaces old by rec,
	// only if old is still what id holds (false: it changed, or is gone); Drop forgets id
	// and reports whether it was kept.
	Put(ctx context.Context, id string, rec []byte) error
	Get(ctx context.Context, id string) ([]byte, error)
	Swap(ctx context.Context, id string, old, rec []byte) (bool, error)
	Drop(ctx context.Context, id string) (bool, error)

	// Index lists id in list at time at (unix seconds); Indexed returns a list's ids,
	// newest first; Unindex takes id out of list.
	Index(ctx context.Context, list, id string, at int64) error
	Unindex(ctx context.Context, list, id string) error
	Indexed(ctx context.Context, list string) ([]string, error)

	// Claim leases to the caller, for lease, a part of batch's parts (0 to parts-1) that is
	// neither finished nor leased: first one whose lease lapsed (its runner died), else the
	// next never claimed; -1 when none is left. It also returns how many parts are
	// finished. Renew extends the lease of part; Finish ends it and returns how many parts
	// are finished (a part finished twice counts once); Leased is how many parts are
	// leased now, lapsed leases apart. Renew with a lease of zero or less lets the lease
	// lapse now: the next Claim may take the part (a closing runner hands it back).
	Claim(ctx context.Context, batch string, parts int, lease time.Duration) (part, finished int, err error)
	Renew(ctx context.Context, batch string, part int, lease time.Duration) error
	Finish(ctx context.Context, batch string, part int) (int, error)
	Leased(ctx context.Context, batch string) (int, error)

	// Answer keeps the result of line of batch unless it has one (false then: the first
	// stays), and adds t to the batch's tally only when it kept it. Answers returns the
	// results of lines from to to-1 (nil for a line without one); Tally is the sum.
	Answer(ctx context.Context, batch string, line int, result []byte, t Tally) (bool, error)
	Answers(ctx context.Context, batch string, from, to int) ([][]byte, error)
	Tally(ctx context.Context, batch string) (Tally, error)
}

// Tally is what a batch's answered lines add up to: its request_counts and usage.
type Tally struct {
	Completed, Failed         int64
	InputTokens, OutputTokens int64
}

// Add adds o to t.
func (t *Tally) Add(o Tally) {
	t.Completed += o.Completed
	t.Failed += o.Failed
	t.InputTokens += o.InputTokens
	t.OutputTokens += o.OutputTokens
}

// ChunkSize is the size of a file's chunks in the store: what an upload or a read of a
// file holds in memory at once.
const ChunkSize = 256 << 10
