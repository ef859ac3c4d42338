package logstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// WriterOptions configure NewWriter; a zero field takes its default.
type WriterOptions struct {
	// Queue bounds the records waiting for the writer (default 10000): Add drops past it.
	Queue int
	// Batch is the most records one Write carries (default 500); a full batch is written at
	// once, a partial one every Every (default 500 ms).
	Batch int
	Every time.Duration
	// Spool bounds the records kept while the store fails (default twice Queue); past it the
	// oldest are dropped.
	Spool int
	// Timeout bounds one Write (default 5 s): a store that hangs is a store that fails.
	Timeout time.Duration
	// OnDrop is told of every record dropped (the queue or the spool full, a record the store
	// refused, what Close could not write): the gateway counts sluice_logs_dropped_total. It
	// is called from Add, on the request path, so it must be quick and never block.
	OnDrop func(n int)
	// OnDepth is told how many records wait in the queue and in the spool (the gateway's
	// sluice_logs_queued and sluice_logs_spooled gauges), by the writer's goroutine: at every
	// Every, and 0, 0 once it has closed. Calls never overlap.
	OnDepth func(queued, spooled int)
	// Log receives the drops (at most one line per LogEvery) and the store's failures.
	Log *slog.Logger
}

// LogEvery is how often, at most, the writer logs drops and failures.
const LogEvery = 10 * time.Second

const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// Writer takes records off the request path and writes them to a Store in batches. Add never
// waits: a record goes to a bounded queue, or is dropped and counted. One goroutine, started
// by NewWriter and ended by Close, owns the queue's other end, the batch and the spool: when
// the store fails, the records wait in the spool (bounded, oldest dropped first) and are
// written again with backoff, each exactly once (the store keeps a record's id once).
//
// Add, Dropped and Spooled are safe for concurrent use. Close is the owner's, once (a second
// call waits for the first and returns its answer); after it Add drops. The Writer does not
// own the Store: close the Writer, then the Store.
type Writer struct {
	st  Store
	opt WriterOptions

	mu     sync.RWMutex // Add holds it shared; Close takes it to set closed
	closed bool
	queue  chan Record          // bounded, capacity Queue
	full   chan struct{}        // capacity 1: Add wakes the loop when the queue holds a batch
	wakeAt int                  // ... that is, this many records
	stop   chan context.Context // capacity 1: Close hands the loop its deadline
	done   chan struct{}        // closed when the loop has returned
	err    error                // what Close reports; written by the loop before done

	wmu         sync.Mutex // guards aborted and cancelWrite
	aborted     bool       // Close's context ended: writes fail at once
	cancelWrite context.CancelFunc

	dropped  atomic.Int64
	unlogged atomic.Int64
	spooled  atomic.Int64
}

// NewWriter starts a writer to st. The caller owns it and calls Close.
func NewWriter(st Store, opt WriterOptions) *Writer {
	if opt.Queue <= 0 {
		opt.Queue = 10000
	}
	if opt.Batch <= 0 {
		opt.Batch = 500
	}
	if opt.Every <= 0 {
		opt.Every = 500 * time.Millisecond
	}
	if opt.Spool <= 0 {
		opt.Spool = 2 * opt.Queue
	}
	opt.Spool = max(opt.Spool, opt.Batch)
	if opt.Timeout <= 0 {
		opt.Timeout = 5 * time.Second
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	w := &Writer{st: st, opt: opt, queue: make(chan Record, opt.Queue), full: make(chan struct{}, 1),
		wakeAt: min(opt.Batch, max(1, opt.Queue/2)), stop: make(chan context.Context, 1), done: make(chan struct{})}
	go w.run()
	return w
}

// Add queues r for writing; it never blocks and never waits on the store. A record without
// a time gets the present one (kept through every retry, so a retry is the same record); one
// without an id cannot be kept exactly once and is dropped.
func (w *Writer) Add(r Record) {
	if r.ID == "" || len(r.ID) > maxIDLen {
		w.drop(1)
		return
	}
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		w.drop(1)
		return
	}
	select {
	case w.queue <- r:
		// The loop does not wait on the queue, which would wake it for every record (a
		// goroutine handoff on the request path, and on an idle core a thread woken): it
		// takes the queue at every Every, or when this wakes it for a batch.
		if len(w.queue) >= w.wakeAt {
			select {
			case w.full <- struct{}{}:
			default:
			}
		}
	default:
		w.drop(1)
	}
}

// Dropped is the number of records dropped since NewWriter.
func (w *Writer) Dropped() int64 { return w.dropped.Load() }

// Spooled is the number of records waiting for a store that failed.
func (w *Writer) Spooled() int { return int(w.spooled.Load()) }

func (w *Writer) drop(n int) {
	if n <= 0 {
		return
	}
	w.dropped.Add(int64(n))
	w.unlogged.Add(int64(n))
	if w.opt.OnDrop != nil {
		w.opt.OnDrop(n)
	}
}

// Close writes what is queued and spooled, retrying a failing store until ctx ends, then
// stops the writer's goroutine and returns once it has. What could not be written is
// dropped, counted, and reported in the error.
func (w *Writer) Close(ctx context.Context) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		<-w.done
		return w.err
	}
	w.closed = true
	w.mu.Unlock()
	w.stop <- ctx
	select {
	case <-w.done:
	case <-ctx.Done():
		w.wmu.Lock()
		w.aborted = true
		if w.cancelWrite != nil {
			w.cancelWrite()
		}
		w.wmu.Unlock()
		<-w.done
	}
	return w.err
}

// run is the writer's goroutine: it batches the queue, writes, spools and retries.
func (w *Writer) run() {
	defer close(w.done)
	tick := time.NewTicker(w.opt.Every)
	defer tick.Stop()
	var (
		pending []Record // the spool, oldest first, then the batch being filled
		retryAt time.Time
		backoff = minBackoff
		lastLog time.Time
		lastErr error // the store's last failure, nil once a flush succeeds
		errNew  bool  // lastErr is not logged yet
	)
	// flush writes pending, a batch at a time; on a failure what is left waits for retryAt.
	flush := func(ctx context.Context) error {
		for len(pending) > 0 {
			n := min(len(pending), w.opt.Batch)
			if err := w.write(ctx, pending[:n]); err != nil {
				lastErr, errNew = err, true
				retryAt = time.Now().Add(jitter(backoff))
				backoff = min(2*backoff, maxBackoff)
				w.spooled.Store(int64(len(pending)))
				return err
			}
			clear(pending[:n])
			pending = pending[n:]
			backoff = minBackoff
		}
		pending, lastErr = pending[:0], nil
		w.spooled.Store(0)
		return nil
	}
	// bound drops the oldest records past the spool's bound.
	bound := func() {
		if over := len(pending) - w.opt.Spool; over > 0 {
			clear(pending[:over])
			pending = pending[over:]
			w.drop(over)
		}
	}
	// drain moves the queue into pending: a batch at a time, each written at once while the
	// store answers; while it fails, all of it (bound drops the oldest past the spool).
	drain := func() {
		for {
			failing, n := time.Now().Before(retryAt), max(0, w.opt.Batch-len(pending))
			if failing {
				n = -1
			}
			pending = w.take(pending, n)
			bound()
			if failing || len(pending) < w.opt.Batch {
				return
			}
			_ = flush(context.Background())
		}
	}
	for {
		select {
		case <-w.full:
			drain()
			continue
		case <-tick.C:
			drain()
			if w.opt.OnDepth != nil {
				w.opt.OnDepth(len(w.queue), len(pending))
			}
			if time.Since(lastLog) >= LogEvery {
				var e error
				if errNew {
					e = lastErr
				}
				if w.logDrops(e) {
					lastLog, errNew = time.Now(), false
				}
			}
			if len(pending) == 0 || time.Now().Before(retryAt) {
				continue
			}
		case ctx := <-w.stop:
			pending = w.take(pending, -1)
			for {
				if flush(ctx) == nil || !sleep(ctx, time.Until(retryAt)) {
					break
				}
			}
			if n := len(pending); n > 0 {
				w.drop(n)
				if lastErr == nil {
					lastErr = ctx.Err()
				}
				w.err = fmt.Errorf("logstore: %d records not written when the writer closed: %w", n, lastErr)
			}
			w.logDrops(lastErr)
			if w.opt.OnDepth != nil {
				w.opt.OnDepth(0, 0)
			}
			return
		}
		_ = flush(context.Background())
	}
}

// take appends what the queue holds, up to n records (all when n < 0), without waiting.
func (w *Writer) take(pending []Record, n int) []Record {
	for i := 0; n < 0 || i < n; i++ {
		select {
		case r := <-w.queue:
			pending = append(pending, r)
		default:
			return pending
		}
	}
	return pending
}

// write writes one batch within the writer's timeout. A batch the store refuses as invalid
// is written a record at a time, and the records it refuses are dropped: retrying them
// would never end.
func (w *Writer) write(ctx context.Context, rs []Record) error {
	ctx, cancel := context.WithTimeout(ctx, w.opt.Timeout)
	defer cancel()
	w.wmu.Lock()
	if w.aborted {
		w.wmu.Unlock()
		return context.Canceled
	}
	w.cancelWrite = cancel
	w.wmu.Unlock()
	defer func() {
		w.wmu.Lock()
		w.cancelWrite = nil
		w.wmu.Unlock()
	}()
	err := w.st.Write(ctx, rs)
	if !invalid(err) {
		return err
	}
	for i := range rs {
		if err := w.st.Write(ctx, rs[i:i+1]); invalid(err) {
			w.opt.Log.Warn("the log store refused a record", "id", rs[i].ID, "err", err.Error())
			w.drop(1)
		} else if err != nil {
			return err // the records before i are written; written again, they are no-ops
		}
	}
	return nil
}

func invalid(err error) bool {
	var e *llm.Error
	return errors.As(err, &e) && e.Kind == llm.Invalid
}

// logDrops logs the drops since the last line and the store's last failure, if any; it
// reports whether it wrote a line.
func (w *Writer) logDrops(lastErr error) bool {
	n := w.unlogged.Swap(0)
	switch {
	case n > 0:
		args := []any{"dropped", n, "spooled", w.Spooled()}
		if lastErr != nil {
			args = append(args, "err", lastErr.Error())
		}
		w.opt.Log.Warn(fmt.Sprintf("request log: %d records dropped", n), args...)
	case lastErr != nil:
		w.opt.Log.Warn("request log: the store failed, records wait in the spool", "spooled", w.Spooled(), "err", lastErr.Error())
	default:
		return false
	}
	return true
}

// jitter spreads retries of replicas that failed together: d ± 20%.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration((rand.Float64()*0.4-0.2)*float64(d))
}

// sleep waits d or until ctx ends, and reports whether the wait ran to its end.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
