package logstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// memStore is a store in memory with the behaviour the writer relies on: a record is kept
// once by id. Its Write can be made to fail, to hang until released or its context ends, and
// to refuse records by id.
type memStore struct {
	mu      sync.Mutex
	recs    map[string]Record
	order   []string
	fail    bool
	hang    chan struct{} // non-nil: Write waits for it to close, or for ctx
	refuse  map[string]bool
	writes  int
	written int
}

func newMem() *memStore { return &memStore{recs: map[string]Record{}} }

var errDown = errors.New("store down")

func (m *memStore) Write(ctx context.Context, rs []Record) error {
	m.mu.Lock()
	m.writes++
	hang, fail := m.hang, m.fail
	m.mu.Unlock()
	if hang != nil {
		select {
		case <-hang:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if fail {
		return errDown
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range rs {
		if m.refuse[r.ID] {
			return &llm.Error{Kind: llm.Invalid, Message: "refused " + r.ID}
		}
	}
	for _, r := range rs {
		if _, ok := m.recs[r.ID]; !ok {
			m.recs[r.ID] = r
			m.order = append(m.order, r.ID)
			m.written++
		}
	}
	return nil
}

func (m *memStore) set(f func(m *memStore)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(m)
}

func (m *memStore) ids() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.order)
}

func (m *memStore) Query(context.Context, Filter) (Page, error) {
	return Page{}, errors.New("no queries")
}
func (m *memStore) Get(_ context.Context, id string) (*Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.recs[id]; ok {
		return &r, nil
	}
	return nil, ErrNotFound
}
func (m *memStore) Usage(context.Context, UsageQuery) ([]UsageRow, error) { return nil, nil }
func (m *memStore) Retain(context.Context, time.Time) error               { return nil }
func (m *memStore) Ping(context.Context) error                            { return nil }
func (m *memStore) Close() error                                          { return nil }

// eventually waits for cond, failing the test after 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 10s: %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func closeWriter(t *testing.T, w *Writer) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return w.Close(ctx)
}

func numbered(n int, prefix string) []Record {
	out := make([]Record, n)
	for i := range out {
		out[i] = rec(i, time.Now())
		out[i].ID = fmt.Sprintf("%s%03d", prefix, i)
	}
	return out
}

// TestWriterSpool: while the store fails, records wait in the spool and are written, each
// once, when it answers again.
func TestWriterSpool(t *testing.T) {
	m := newMem()
	m.fail = true
	w := NewWriter(m, WriterOptions{Batch: 10, Every: 5 * time.Millisecond})
	for _, r := range numbered(100, "s") {
		w.Add(r)
	}
	eventually(t, "100 records in the spool", func() bool { return w.Spooled() == 100 })
	m.set(func(m *memStore) { m.fail = false })
	eventually(t, "100 records written", func() bool { return len(m.ids()) == 100 })
	if err := closeWriter(t, w); err != nil {
		t.Fatal(err)
	}
	if w.Dropped() != 0 || m.written != 100 || m.writes <= 10 {
		t.Errorf("dropped %d, written %d in %d writes; want 0 dropped, 100 written, retries", w.Dropped(), m.written, m.writes)
	}
	if got := m.ids(); !slices.Equal(got, ids(numbered(100, "s"))) {
		t.Errorf("got order %v, want the order of Add", got)
	}
}

// TestWriterSpoolBound: the spool keeps the newest records up to its bound; the rest are
// dropped and counted.
func TestWriterSpoolBound(t *testing.T) {
	m := newMem()
	m.fail = true
	var onDrop atomic.Int64
	w := NewWriter(m, WriterOptions{Queue: 1000, Batch: 10, Spool: 50, Every: 5 * time.Millisecond,
		OnDrop: func(n int) { onDrop.Add(int64(n)) }})
	set := numbered(200, "b")
	for _, r := range set {
		w.Add(r)
	}
	eventually(t, "150 records dropped", func() bool { return w.Dropped() == 150 })
	m.set(func(m *memStore) { m.fail = false })
	if err := closeWriter(t, w); err != nil {
		t.Fatal(err)
	}
	if got, want := m.ids(), ids(set[150:]); !slices.Equal(got, want) {
		t.Errorf("got %v, want the newest 50 %v", got, want)
	}
	if onDrop.Load() != 150 {
		t.Errorf("OnDrop counted %d, want 150", onDrop.Load())
	}
}

// TestWriterQueueFull: a store that hangs never holds up Add; what the queue cannot take is
// dropped and counted, the rest written once the store answers.
func TestWriterQueueFull(t *testing.T) {
	m := newMem()
	release := make(chan struct{})
	m.hang = release
	var onDrop atomic.Int64
	w := NewWriter(m, WriterOptions{Queue: 10, Batch: 5, Spool: 5, Every: time.Millisecond, Timeout: time.Minute,
		OnDrop: func(n int) { onDrop.Add(int64(n)) }})
	w.Add(rec(0, time.Now()))
	eventually(t, "the writer waiting on the store", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.writes > 0
	})
	for _, r := range numbered(100, "q") {
		w.Add(r) // the test hangs here if Add waits on the store
	}
	if w.Dropped() != 90 || onDrop.Load() != 90 {
		t.Errorf("dropped %d (OnDrop %d) of 100 with a queue of 10, want 90", w.Dropped(), onDrop.Load())
	}
	m.set(func(m *memStore) { m.hang = nil })
	close(release)
	if err := closeWriter(t, w); err != nil {
		t.Fatal(err)
	}
	q := 0
	for _, id := range m.ids() {
		if strings.HasPrefix(id, "q") {
			q++
		}
	}
	if q+int(w.Dropped()) != 100 {
		t.Errorf("written %d + dropped %d of the 100, want every record either written or counted", q, w.Dropped())
	}
}

// TestWriterClose: Close writes what is pending; after Close, Add drops; a record without id
// is dropped, one without time gets the present.
func TestWriterClose(t *testing.T) {
	m := newMem()
	w := NewWriter(m, WriterOptions{Every: time.Hour}) // only Close flushes
	for _, r := range numbered(42, "c") {
		w.Add(r)
	}
	w.Add(Record{Alias: "no id"})
	w.Add(Record{ID: "untimed"})
	if err := closeWriter(t, w); err != nil {
		t.Fatal(err)
	}
	if n := len(m.ids()); n != 43 {
		t.Errorf("got %d records after Close, want 43", n)
	}
	if r, err := m.Get(context.Background(), "untimed"); err != nil || r.Time.IsZero() {
		t.Errorf("got %+v, %v, want the record with a time", r, err)
	}
	w.Add(rec(1, time.Now()))
	if w.Dropped() != 2 {
		t.Errorf("dropped %d, want 2 (no id, after Close)", w.Dropped())
	}
	if err := closeWriter(t, w); err != nil { // twice: the same answer
		t.Fatal(err)
	}
}

// TestWriterCloseDeadline: a store that fails, or hangs, until Close's deadline: Close returns
// at the deadline, drops and counts what is left, and reports it.
func TestWriterCloseDeadline(t *testing.T) {
	for _, hang := range []bool{false, true} {
		t.Run(fmt.Sprint("hang=", hang), func(t *testing.T) {
			m := newMem()
			m.fail = true
			if hang {
				m.hang = make(chan struct{})
			}
			w := NewWriter(m, WriterOptions{Batch: 10, Every: time.Millisecond, Timeout: time.Hour})
			for _, r := range numbered(30, "d") {
				w.Add(r)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			err := w.Close(ctx)
			if err == nil || !strings.Contains(err.Error(), "30 records not written") {
				t.Fatalf("got %v, want an error saying 30 records were not written", err)
			}
			if w.Dropped() != 30 {
				t.Errorf("dropped %d, want 30", w.Dropped())
			}
		})
	}
}

// TestWriterRefused: a record the store refuses as invalid is dropped alone; the rest of its
// batch is written, and the writer does not retry it for ever.
func TestWriterRefused(t *testing.T) {
	m := newMem()
	m.refuse = map[string]bool{"r005": true}
	w := NewWriter(m, WriterOptions{Batch: 10, Every: time.Millisecond})
	for _, r := range numbered(20, "r") {
		w.Add(r)
	}
	if err := closeWriter(t, w); err != nil {
		t.Fatal(err)
	}
	if n := len(m.ids()); n != 19 || w.Dropped() != 1 {
		t.Errorf("got %d written, %d dropped; want 19 and 1", n, w.Dropped())
	}
}

// lockedBuffer is a log destination safe to read while the writer writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestWriterLogsDropsRarely: drops all the time for 35 s, at most one line every 10 s.
func TestWriterLogsDropsRarely(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMem()
		m.hang = make(chan struct{}) // a store that never answers
		var buf lockedBuffer
		w := NewWriter(m, WriterOptions{Queue: 1, Batch: 1, Every: 100 * time.Millisecond, Timeout: 3 * time.Second,
			Log: slog.New(slog.NewTextHandler(&buf, nil))})
		for i := range 3500 {
			w.Add(rec(i, time.Now()))
			time.Sleep(10 * time.Millisecond)
		}
		lines := strings.Count(buf.String(), "records dropped")
		if lines < 2 || lines > 4 {
			t.Errorf("got %d lines about drops in 35 s, want one every 10 s at most (and some):\n%s", lines, buf.String())
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := w.Close(ctx); err == nil {
			t.Error("got no error from Close with a store that never answered")
		}
	})
}

// TestWriterSmallSpool: a spool as small as a batch drops nothing while the store answers.
func TestWriterSmallSpool(t *testing.T) {
	m := newMem()
	w := NewWriter(m, WriterOptions{Batch: 10, Spool: 1, Every: time.Millisecond})
	for _, r := range numbered(1000, "p") {
		w.Add(r)
	}
	if err := closeWriter(t, w); err != nil {
		t.Fatal(err)
	}
	if n := len(m.ids()); n != 1000 || w.Dropped() != 0 {
		t.Errorf("got %d written, %d dropped; want 1000 and 0", n, w.Dropped())
	}
}

// TestWriterWakesForBatches: the writer's goroutine is not woken for each record (a handoff
// on the request path): records wait in the queue until a batch is there or Every comes.
func TestWriterWakesForBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMem()
		w := NewWriter(m, WriterOptions{Batch: 10, Every: time.Hour})
		defer w.Close(context.Background()) // on a failure too: a bubble must end its goroutines
		set := numbered(25, "w")
		for i, r := range set[:9] {
			w.Add(r)
			synctest.Wait()
			if len(w.queue) != i+1 || m.writes != 0 {
				t.Fatalf("after %d records: %d queued, %d writes; want them all queued, none written", i+1, len(w.queue), m.writes)
			}
		}
		// One at a time: the writer runs beside Add, and a wake while it still holds part of
		// a batch it took leaves that part for Every (no later than a record waited before
		// the writer woke for batches), so adding the 16 at once may write 10 here.
		for _, r := range set[9:] {
			w.Add(r)
			synctest.Wait()
		}
		if got := len(m.ids()); got != 20 {
			t.Errorf("after 25 records: %d written; want two batches, the rest waiting for Every", got)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if got, want := m.ids(), ids(set); !slices.Equal(got, want) {
			t.Errorf("after Every: got %v, want %v", got, want)
		}
		if err := w.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}
