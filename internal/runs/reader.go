package runs

import (
	"context"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/uistream"
)

// page is how many frames a reader takes from the Store or the window at once.
const page = 256

// Reader is one connection's view of a run: its own cursor, through the Store (the replay, or
// a catch-up after a burst) up to this replica's window of the run, then the live frames from
// the window. Memory does not grow with a slow connection (it only holds a cursor and a page);
// one that falls more than MaxLag frames behind the live end is ended with ErrBehind, and may
// resume. Not safe for concurrent use; Close releases it.
type Reader struct {
	m         *Manager
	chat, run string
	feed      *feed // nil: the run is over and the Store holds all of it
	tail      *tail // the replica's reader of the Store that fills feed, released on Close
	cursor    int64
	buf       []Frame
	live      bool // has reached the live frames: from now on its lag is bounded
	done      bool // [DONE] was returned
	wait      func()
}

// BeforeWait makes f run whenever Next is about to wait: for the run's next frame, or for a
// page from the Store. The server flushes what it wrote to the client then, so the frames
// of a page or of a burst leave in one write, and none waits for the next.
func (rd *Reader) BeforeWait(f func()) { rd.wait = f }

func (rd *Reader) waiting() {
	if rd.wait != nil {
		rd.wait()
	}
}

// Open returns a reader of the chat's current run for the caller's key: a full replay, or
// what follows lastEventID ("<run id>-<n>", the id line of a frame) when it names a frame of
// that run. ErrNoRun when there is no run to read (none, or a finished one and no event id),
// ErrNotFound when the run is another key's, ErrTrimmed when frames after the cursor were
// trimmed by the length cap.
func (m *Manager) Open(ctx context.Context, chat, key, lastEventID string) (*Reader, error) {
	meta, err := m.lookup(ctx, chat, key)
	if err != nil {
		return nil, err
	}
	var after int64
	if run, seq, ok := ParseEventID(lastEventID); ok && run == meta.Run {
		after = min(seq, meta.Seq)
	} else if meta.Done {
		return nil, ErrNoRun // a plain resume of a finished run (DESIGN §8)
	}
	if meta.Done && after >= meta.Seq {
		return nil, ErrNoRun
	}
	if after < meta.Seq && after+1 < meta.First(m.o.MaxFrames) {
		return nil, ErrTrimmed
	}
	rd := &Reader{m: m, chat: chat, run: meta.Run, cursor: after}
	switch r := m.local(meta.Run); {
	case r != nil:
		rd.feed = r.feed
	case !meta.Done:
		rd.tail = m.follow(meta)
		if rd.tail == nil {
			return nil, ErrNoRun // shutting down
		}
		rd.feed = rd.tail.feed
	}
	return rd, nil
}

// ParseEventID splits a frame id "<run id>-<n>".
func ParseEventID(id string) (run string, seq int64, ok bool) {
	i := strings.LastIndexByte(id, '-')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.ParseInt(id[i+1:], 10, 64)
	if err != nil || n < 0 {
		return "", 0, false
	}
	return id[:i], n, true
}

// Next returns the next frame, waiting for it. io.EOF after the run's last frame (or when the
// run ended without one: it was replaced, or its replica crashed before the lease lapsed and
// this replica let go); ErrBehind, ErrTrimmed, or ctx's error otherwise.
func (rd *Reader) Next(ctx context.Context) ([]byte, error) {
	for {
		if len(rd.buf) > 0 {
			f := rd.buf[0]
			rd.buf = rd.buf[1:]
			rd.cursor = f.Seq
			rd.done = uistream.IsDone(f.Data)
			return f.Data, nil
		}
		if rd.done {
			return nil, io.EOF
		}
		if rd.feed != nil {
			out, behind, last, ended, wake := rd.feed.since(rd.cursor, page)
			if !behind {
				rd.live = true
				if len(out) > 0 {
					rd.buf = out
					continue
				}
				if ended {
					return nil, io.EOF
				}
				rd.waiting()
				select {
				case <-wake:
					continue
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			if rd.live && last-rd.cursor > int64(rd.m.o.MaxLag) {
				return nil, ErrBehind
			}
		}
		rd.waiting()
		out, err := rd.m.o.Store.Read(ctx, rd.chat, rd.run, rd.cursor, page)
		if err != nil {
			return nil, err
		}
		if len(out) == 0 {
			if rd.feed == nil {
				return nil, io.EOF
			}
			return nil, ErrBehind // the window moved on and the Store lacks the gap: resume later
		}
		if out[0].Seq != rd.cursor+1 {
			return nil, ErrTrimmed
		}
		rd.buf = out
	}
}

// Cursor is the last frame returned.
func (rd *Reader) Cursor() int64 { return rd.cursor }

// Close releases the reader.
func (rd *Reader) Close() {
	if rd.tail != nil {
		rd.m.release(rd.tail)
		rd.tail = nil
	}
}

// tail is this replica's one reader of the Store for a run another replica owns: it fills a
// feed that every connection here reads (DESIGN §8, one Redis reader per run per replica).
type tail struct {
	feed   *feed
	refs   int
	cancel context.CancelFunc
}

// follow returns the run's tail, started when it is the first; nil when shutting down.
func (m *Manager) follow(meta *Meta) *tail {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	if t := m.tails[meta.Run]; t != nil {
		t.refs++
		return t
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &tail{feed: newFeed(m.o.Window, m.o.Window, meta.Seq), refs: 1, cancel: cancel}
	m.tails[meta.Run] = t
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer t.feed.end()
		m.tailLoop(ctx, t, *meta)
	}()
	return t
}

func (m *Manager) release(t *tail) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.refs--; t.refs > 0 {
		return
	}
	t.cancel()
	for id, x := range m.tails {
		if x == t {
			delete(m.tails, id)
		}
	}
}

// tailLoop reads the run's new frames with blocking reads into the feed until its last frame.
// Whenever a read comes back empty it checks the run: gone or replaced ends the tail; a
// lapsed lease ends the run with an error, written once for every reader on any replica.
func (m *Manager) tailLoop(ctx context.Context, t *tail, meta Meta) {
	block := min(max(m.o.Lease/4, 50*time.Millisecond), 5*time.Second)
	after, check := meta.Seq, meta.Lapsed
	for ctx.Err() == nil {
		if check {
			cur, err := m.o.Store.Lookup(ctx, meta.Chat)
			switch {
			case err != nil:
			case cur == nil || cur.Run != meta.Run:
				return
			case cur.Lapsed:
				m.reap(ctx, cur)
			case cur.Done && cur.Seq <= after:
				return
			}
		}
		frs, err := m.o.Store.Wait(ctx, meta.Chat, meta.Run, after, block)
		if err != nil {
			sleep(ctx, block)
		}
		for _, f := range frs {
			t.feed.append(f)
			after = f.Seq
			if uistream.IsDone(f.Data) {
				return
			}
		}
		check = len(frs) == 0
	}
}

// reap ends a run whose owner's lease lapsed: an error, then finish and [DONE], numbered on
// from its last stored frame, in its schema version.
func (m *Manager) reap(ctx context.Context, meta *Meta) {
	v, err := uistream.ParseVersion(meta.Proto)
	if err != nil {
		v = uistream.V7
	}
	var frs []Frame
	enc := uistream.NewEncoder(v, meta.Run, meta.Seq, func(seq int64, b []byte) { frs = append(frs, Frame{Seq: seq, Data: b}) })
	enc.Error("The run was lost: the gateway replica serving it stopped answering.")
	enc.Finish("error", nil)
	enc.Done()
	ok, err := m.o.Store.Reap(ctx, Write{Chat: meta.Chat, Run: meta.Run, Frames: frs, Done: true, TTL: m.o.TTL,
		MaxFrames: m.o.MaxFrames}, meta.Seq)
	if ok {
		m.o.Log.Warn("run ended after its owner's lease lapsed", "run", meta.Run)
	} else if err != nil {
		m.o.Log.Warn("ending a run whose lease lapsed failed", "run", meta.Run, "err", err.Error())
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
