package batch

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/limit"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// Defaults of a Runner.
const (
	DefaultRate    = 10 // lines per second of an alias
	DefaultWorkers = 4
	DefaultLease   = 30 * time.Second
	DefaultPoll    = time.Second
	// PartLines is how many lines a part holds: what a runner claims at once.
	PartLines = 8
	// MaxLines bounds a batch's lines, as OpenAI's.
	MaxLines = 50000
)

// Runner runs the batches of a Store in the background, on every replica: it validates a
// new batch's input file and cuts it into parts, claims parts (a lease, renewed while it
// runs them, so a dead replica's part is taken over when the lease lapses), runs each
// line through Handler as a request of the batch's key, writes each line's result once,
// and finalizes the batch (its output and error files). Start it once; Close stops it and
// waits for its goroutines. The exported fields are read-only once it started.
type Runner struct {
	Store Store
	// Key is the key of a batch's owner (the id its host recorded), whose request each
	// line is; nil, or an owner "": the lines go without a key (auth off).
	Key func(ctx context.Context, id string) (*auth.Key, error)
	// Limiter holds each alias to its Rate across the replicas that share it (nil: a
	// limiter of this process).
	Limiter limit.Limiter
	// Budgets releases a batch's budget holds when it ends (nil: none are released; they
	// end at their Until).
	Budgets usage.Budgets
	// Rate is the lines per second of an alias (0: DefaultRate).
	Rate func(alias string) int
	// Workers is how many parts this replica runs at once (0: DefaultWorkers).
	Workers int
	// Lease is how long a claim holds without renewal (0: DefaultLease); Poll how often the
	// runner looks for work (0: DefaultPoll).
	Lease, Poll time.Duration
	Log         *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time

	handler http.Handler
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	slots   chan struct{} // one per part running
	mu      sync.Mutex
	parts   map[string][]part // the parts of the batches seen, by batch
	running map[string]int    // this replica's parts running, by batch
}

// Start runs the runner with h, the gateway's handler, until Close.
func (r *Runner) Start(h http.Handler) {
	if r.Workers <= 0 {
		r.Workers = DefaultWorkers
	}
	if r.Lease <= 0 {
		r.Lease = DefaultLease
	}
	if r.Poll <= 0 {
		r.Poll = DefaultPoll
	}
	if r.Limiter == nil {
		r.Limiter = &limit.Memory{}
	}
	if r.Log == nil {
		r.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r.handler, r.slots = h, make(chan struct{}, r.Workers)
	r.parts, r.running = map[string][]part{}, map[string]int{}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		t := time.NewTicker(r.Poll)
		defer t.Stop()
		for {
			r.tick(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// Close stops the runner: lines running are abandoned unanswered (another replica, or
// this one after a restart, runs them once their lease lapses). Safe to call when the
// runner never started.
func (r *Runner) Close() error {
	if r.cancel != nil {
		r.cancel()
	}
	r.wg.Wait()
	return nil
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// tick looks at every active batch once and does what it needs next.
func (r *Runner) tick(ctx context.Context) {
	ids, err := r.Store.Indexed(ctx, "active")
	if err != nil {
		r.Log.Warn("batches: listing the active ones", "err", err)
		return
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			return
		}
		if err := r.step(ctx, id); err != nil && ctx.Err() == nil {
			r.Log.Warn("batches: a step failed", "batch", id, "err", err)
		}
	}
}

// step does batch id's next step.
func (r *Runner) step(ctx context.Context, id string) error {
	var b batchRec
	if _, err := load(ctx, r.Store, id, "batch", &b); llm.KindOf(err) == llm.NotFound {
		return r.Store.Unindex(ctx, "active", id)
	} else if err != nil {
		return err
	}
	now := r.now().Unix()
	switch st := b.Batch.Status; {
	case terminal(st):
		r.forget(id)
		r.release(ctx, &b)
		return r.Store.Unindex(ctx, "active", id)
	case (st == "validating" || st == "in_progress") && b.Batch.ExpiresAt != nil && now >= *b.Batch.ExpiresAt:
		if got, ok, err := r.take(ctx, id, st, "finalizing", "expired"); ok {
			return r.finalize(ctx, got)
		} else {
			return err
		}
	case st == "validating":
		if got, ok, err := r.take(ctx, id, st, st, ""); ok {
			return r.validate(ctx, got)
		} else {
			return err
		}
	case st == "in_progress":
		return r.claim(ctx, &b)
	case st == "finalizing":
		if got, ok, err := r.take(ctx, id, st, st, ""); ok {
			return r.finalize(ctx, got)
		} else {
			return err
		}
	case st == "cancelling":
		if n, err := r.Store.Leased(ctx, id); err != nil || n > 0 {
			return err
		}
		if got, ok, err := r.take(ctx, id, st, st, "cancelled"); ok {
			return r.finalize(ctx, got)
		} else {
			return err
		}
	}
	return nil
}

// take takes the step of batch id from status from, moving it to status to, for a lease:
// false when another runner holds it, or the batch moved on.
func (r *Runner) take(ctx context.Context, id, from, to, final string) (*batchRec, bool, error) {
	now := r.now()
	return update(ctx, r.Store, id, func(b *batchRec) error {
		if b.Batch.Status != from || b.Lease > now.UnixMilli() {
			return errChanged
		}
		if to != from {
			b.Batch.stamp(to, now.Unix())
		}
		if final != "" {
			b.Final = final
		}
		b.Lease = now.Add(r.Lease).UnixMilli()
		return nil
	})
}

// claim starts parts of batch b while this replica has free workers; with every part
// finished, it finalizes the batch.
func (r *Runner) claim(ctx context.Context, b *batchRec) error {
	id := b.Batch.ID
	parts, err := r.partsOf(ctx, id)
	if err != nil {
		return err
	}
	for {
		select {
		case r.slots <- struct{}{}:
		default:
			return nil // every worker is busy
		}
		n, finished, err := r.Store.Claim(ctx, id, len(parts), r.Lease)
		if err != nil || n < 0 {
			<-r.slots
			if err != nil || finished < len(parts) {
				return err
			}
			if got, ok, err := r.take(ctx, id, "in_progress", "finalizing", "completed"); !ok {
				return err
			} else {
				return r.finalize(ctx, got)
			}
		}
		r.mu.Lock()
		r.running[id]++
		r.mu.Unlock()
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer func() {
				r.mu.Lock()
				r.running[id]--
				r.mu.Unlock()
				<-r.slots
			}()
			r.work(ctx, b, parts, n)
		}()
	}
}

// work runs part n of batch b, then the next parts it can claim, until none is left or
// the batch stops running.
func (r *Runner) work(ctx context.Context, b *batchRec, parts []part, n int) {
	id := b.Batch.ID
	for n >= 0 {
		if err := r.runPart(ctx, b, n, parts[n]); err != nil {
			if ctx.Err() != nil {
				r.handBack(id, n)
				return
			}
			if !errors.Is(err, errStopped) {
				r.Log.Warn("batches: a part failed; its lease will lapse and it runs again", "batch", id, "part", n, "err", err)
			}
			return
		}
		var err error
		if n, _, err = r.Store.Claim(ctx, id, len(parts), r.Lease); err != nil {
			return
		}
	}
}

// handBack lets the lease of part n of batch id lapse now, as the runner closes with the
// part unfinished (none of its lines is running any more: runPart runs them one at a time
// and has returned): another replica, or this one restarted, takes it at its next poll
// instead of after the lease (a rolling restart). A store that cannot be reached leaves
// the lease to lapse by itself.
func (r *Runner) handBack(id string, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := r.Store.Renew(ctx, id, n, -time.Millisecond); err != nil {
		r.Log.Warn("batches: handing a part back at close; its lease will lapse", "batch", id, "part", n, "err", err)
	}
}

// partsOf is batch id's parts, read once.
func (r *Runner) partsOf(ctx context.Context, id string) ([]part, error) {
	r.mu.Lock()
	p, ok := r.parts[id]
	r.mu.Unlock()
	if ok {
		return p, nil
	}
	raw, err := r.Store.Get(ctx, partsID(id))
	if err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, errors.New("batch: the parts of an in-progress batch are gone")
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.parts[id] = p
	r.mu.Unlock()
	return p, nil
}

// release ends the budget holds of b, which ended: its lines were charged as they ran.
func (r *Runner) release(ctx context.Context, b *batchRec) {
	if r.Budgets == nil {
		return
	}
	for _, h := range b.Holds {
		if err := r.Budgets.Release(context.WithoutCancel(ctx), h); err != nil {
			r.Log.Warn("batches: releasing a budget hold", "batch", b.Batch.ID, "err", err)
		}
	}
}

// forget drops what the runner keeps of a batch that ended.
func (r *Runner) forget(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running[id] == 0 {
		delete(r.parts, id)
		delete(r.running, id)
	}
}

// live reports whether batch id still runs its lines.
func (r *Runner) live(ctx context.Context, id string) (bool, error) {
	var b batchRec
	if _, err := load(ctx, r.Store, id, "batch", &b); err != nil {
		return false, err
	}
	return b.Batch.Status == "in_progress" && (b.Batch.ExpiresAt == nil || r.now().Unix() < *b.Batch.ExpiresAt), nil
}

// wait holds the caller to alias's rate, across the replicas that share the limiter.
func (r *Runner) wait(ctx context.Context, alias string) error {
	rate := DefaultRate
	if r.Rate != nil {
		if n := r.Rate(alias); n > 0 {
			rate = n
		}
	}
	for {
		res, err := r.Limiter.Reserve(ctx, limit.Ask{Key: "batch:" + alias, ID: newID("line_"),
			Requests: limit.Rule{Limit: int64(rate), Window: time.Second}})
		d := res.RetryAfter
		switch {
		case err != nil:
			d = time.Second // the shared limiter is unreachable: try again
		case res.OK:
			return nil
		case d <= 0:
			d = time.Second / time.Duration(rate)
		}
		if err := sleep(ctx, d); err != nil {
			return err
		}
	}
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
