package runs

import "sync"

// feed is one replica's window on a run: the recent frames, which its connections read with
// their own cursors. The owner's feed also keeps every frame not yet in the Store, so that a
// connection catching up from the Store finds no gap. One writer (the run, or the replica's
// reader of the Store), many readers; wake is closed and replaced on every change, so waiting
// costs no goroutine. Safe for concurrent use.
type feed struct {
	mu     sync.Mutex
	frames []Frame // consecutive; frames[0].Seq is the oldest in the window
	last   int64   // the last frame appended (0: none)
	stored int64   // frames up to this one are in the Store (the owner's feed)
	window int     // frames kept beyond the unstored ones
	ended  bool    // nothing more will be appended
	limit  int     // frames kept whatever the Store holds: the length cap
	wake   chan struct{}
}

// newFeed starts a feed after frame seq after (a remote run's reader starts late).
func newFeed(window, limit int, after int64) *feed {
	return &feed{window: window, limit: max(limit, window), last: after, stored: after, wake: make(chan struct{})}
}

func (f *feed) append(fr Frame) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended || fr.Seq <= f.last {
		return
	}
	f.frames = append(f.frames, fr)
	f.last = fr.Seq
	f.trim()
	f.signal()
}

// markStored records that the Store holds every frame up to seq: they may leave the window.
func (f *feed) markStored(seq int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stored = max(f.stored, seq)
	f.trim()
}

// trim drops the frames beyond the window that the Store holds; the slice is copied down
// when half of it is dead, so the window's memory stays bounded.
func (f *feed) trim() {
	drop := 0
	for drop < len(f.frames)-f.window && (f.frames[drop].Seq <= f.stored || len(f.frames)-drop > f.limit) {
		drop++
	}
	if drop == 0 {
		return
	}
	for i := range drop {
		f.frames[i] = Frame{}
	}
	f.frames = f.frames[drop:]
	if cap(f.frames) > 2*f.window && len(f.frames) < cap(f.frames)/2 {
		f.frames = append(make([]Frame, 0, 2*len(f.frames)+1), f.frames...)
	}
}

func (f *feed) end() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.ended {
		f.ended = true
		f.signal()
	}
}

func (f *feed) signal() {
	close(f.wake)
	f.wake = make(chan struct{})
}

// since returns the window's frames after seq (at most n), or behind when frames after seq
// have left the window (the caller reads them from the Store, or gives up), the last frame,
// whether the feed ended, and a channel closed at the next change.
func (f *feed) since(seq int64, n int) (out []Frame, behind bool, last int64, ended bool, wake <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	first := f.last + 1 // the oldest frame the window can give
	if len(f.frames) > 0 {
		first = f.frames[0].Seq
	}
	if seq+1 < first && seq < f.last {
		return nil, true, f.last, f.ended, f.wake
	}
	for _, fr := range f.frames {
		if fr.Seq > seq {
			out = append(out, fr)
			if len(out) == n {
				break
			}
		}
	}
	return out, false, f.last, f.ended, f.wake
}
