package runs

import (
	"context"
	"time"
)

// keep is the run's writer to the Store: it appends what the loop emitted in batches, at most
// once per FlushInterval (never a round trip per token), renews the owner lease at least every
// Lease/3 while the loop is silent (a first event may take minutes), and learns from each
// write whether the run was stopped from another replica, or is no longer this replica's. It
// owns every Store write of the run, the last one included.
func (r *Run) keep() {
	o := r.m.o
	renew := o.Lease / 3
	t := time.NewTimer(renew)
	defer t.Stop()
	last, armed := time.Now(), false
	for {
		select {
		case <-r.ended:
			r.final()
			return
		case <-r.dirty:
			if !armed {
				armed = true
				t.Reset(max(o.FlushInterval-time.Since(last), 0))
			}
		case <-t.C:
			armed = false
			_ = r.write(false)
			last = time.Now()
			t.Reset(renew)
		}
	}
}

// final stores the run's last frames and marks it done, retrying for about a lease while the
// Store fails; if it never answers, the lease lapses and a reader's replica ends the run.
func (r *Run) final() {
	defer r.feed.end()
	deadline := time.Now().Add(r.m.o.Lease)
	for {
		if r.silent.Load() || r.write(true) == nil || time.Now().After(deadline) {
			return
		}
		time.Sleep(r.m.o.FlushInterval + 100*time.Millisecond)
	}
}

// write appends the pending frames (none: the lease is renewed) and acts on the verdict.
func (r *Run) write(done bool) error {
	if r.silent.Load() {
		return nil
	}
	r.mu.Lock()
	batch := r.pending
	r.pending = nil
	r.mu.Unlock()
	// Not the run's context: a stopped run still writes its abort. The Store bounds each call.
	v, err := r.store.Append(context.Background(), Write{Chat: r.sp.Chat, Run: r.id, Owner: r.owner, Frames: batch,
		Lease: r.m.o.Lease, Done: done, TTL: r.m.o.TTL, MaxFrames: r.m.o.MaxFrames})
	if err != nil {
		r.mu.Lock()
		r.pending = append(batch, r.pending...)
		r.mu.Unlock()
		return err
	}
	if len(batch) > 0 {
		r.feed.markStored(batch[len(batch)-1].Seq)
	}
	switch {
	case v.Lost:
		// Reaped after a lapse, or replaced by a newer run of the chat: whatever it writes
		// now would contradict what readers were told.
		r.silent.Store(true)
		r.cancel(errLost)
		r.feed.end()
	case v.Stop:
		r.cancel(errStopped)
	}
	return nil
}
