package batch

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Memory is a Store of one process: records, claims and results in memory, files' chunks
// on disk under Dir (never the whole file in memory). Gone at restart; a fleet uses
// redisstore's. Safe for concurrent use; Close removes the directory it made.
type Memory struct {
	// Now is the clock of the leases; nil is time.Now.
	Now func() time.Time

	mu      sync.Mutex
	dir     string
	made    bool // dir was made by NewMemory: Close removes it
	recs    map[string][]byte
	lists   map[string]map[string]int64
	batches map[string]*progress
}

// progress is one batch's claims and results.
type progress struct {
	cursor  int
	leases  map[int]time.Time
	done    map[int]bool
	answers map[int][]byte
	tally   Tally
}

var _ Store = (*Memory)(nil)

// NewMemory returns a Memory whose chunks are kept under dir, or, when dir is "", under a
// new temporary directory that Close removes.
func NewMemory(dir string) (*Memory, error) {
	m := &Memory{dir: dir, recs: map[string][]byte{}, lists: map[string]map[string]int64{}, batches: map[string]*progress{}}
	if dir == "" {
		d, err := os.MkdirTemp("", "sluice-files-")
		if err != nil {
			return nil, err
		}
		m.dir, m.made = d, true
	}
	return m, os.MkdirAll(m.dir, 0o700)
}

// Close removes the chunks' directory if NewMemory made it.
func (m *Memory) Close() error {
	if m.made {
		return os.RemoveAll(m.dir)
	}
	return nil
}

func (m *Memory) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// chunkPath is where chunk n of file is kept; ids are the host's own (no separator).
func (m *Memory) chunkPath(file string, n int) string {
	return filepath.Join(m.dir, filepath.Base(file)+"."+strconv.Itoa(n))
}

func (m *Memory) PutChunk(_ context.Context, file string, n int, b []byte) error {
	return os.WriteFile(m.chunkPath(file, n), b, 0o600)
}

func (m *Memory) Chunk(_ context.Context, file string, n int) ([]byte, error) {
	b, err := os.ReadFile(m.chunkPath(file, n))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

func (m *Memory) DropChunks(_ context.Context, file string, n int) error {
	var errs []error
	for i := range n {
		if err := os.Remove(m.chunkPath(file, i)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (m *Memory) Put(_ context.Context, id string, rec []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs[id] = bytes.Clone(rec)
	return nil
}

func (m *Memory) Get(_ context.Context, id string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return bytes.Clone(m.recs[id]), nil
}

func (m *Memory) Swap(_ context.Context, id string, old, rec []byte) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.recs[id]
	if !ok || !bytes.Equal(cur, old) {
		return false, nil
	}
	m.recs[id] = bytes.Clone(rec)
	return true, nil
}

func (m *Memory) Drop(_ context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.recs[id]
	delete(m.recs, id)
	delete(m.batches, id)
	return ok, nil
}

func (m *Memory) Index(_ context.Context, list, id string, at int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lists[list] == nil {
		m.lists[list] = map[string]int64{}
	}
	m.lists[list][id] = at
	return nil
}

func (m *Memory) Unindex(_ context.Context, list, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.lists[list], id)
	return nil
}

func (m *Memory) Indexed(_ context.Context, list string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.lists[list]
	ids := make([]string, 0, len(l))
	for id := range l {
		ids = append(ids, id)
	}
	// Newest first, as Redis's ZREVRANGE: by time, then by id.
	slices.SortFunc(ids, func(a, b string) int {
		if c := cmp.Compare(l[b], l[a]); c != 0 {
			return c
		}
		return cmp.Compare(b, a)
	})
	return ids, nil
}

// progressOf is batch's progress; m.mu is held.
func (m *Memory) progressOf(batch string) *progress {
	p := m.batches[batch]
	if p == nil {
		p = &progress{leases: map[int]time.Time{}, done: map[int]bool{}, answers: map[int][]byte{}}
		m.batches[batch] = p
	}
	return p
}

func (m *Memory) Claim(_ context.Context, batch string, parts int, lease time.Duration) (int, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, now := m.progressOf(batch), m.now()
	claimed := -1
	for part, until := range p.leases {
		if !until.After(now) && (claimed < 0 || part < claimed) {
			claimed = part
		}
	}
	if claimed < 0 && p.cursor < parts {
		claimed = p.cursor
		p.cursor++
	}
	if claimed >= 0 {
		p.leases[claimed] = now.Add(lease)
	}
	return claimed, len(p.done), nil
}

func (m *Memory) Renew(_ context.Context, batch string, part int, lease time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.progressOf(batch)
	if _, ok := p.leases[part]; ok {
		p.leases[part] = m.now().Add(lease)
	}
	return nil
}

func (m *Memory) Finish(_ context.Context, batch string, part int) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.progressOf(batch)
	delete(p.leases, part)
	p.done[part] = true
	return len(p.done), nil
}

func (m *Memory) Leased(_ context.Context, batch string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, n := m.progressOf(batch), 0
	for _, until := range p.leases {
		if until.After(m.now()) {
			n++
		}
	}
	return n, nil
}

func (m *Memory) Answer(_ context.Context, batch string, line int, result []byte, t Tally) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.progressOf(batch)
	if _, ok := p.answers[line]; ok {
		return false, nil
	}
	p.answers[line] = bytes.Clone(result)
	p.tally.Add(t)
	return true, nil
}

func (m *Memory) Answers(_ context.Context, batch string, from, to int) ([][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.progressOf(batch)
	out := make([][]byte, 0, max(to-from, 0))
	for i := from; i < to; i++ {
		out = append(out, p.answers[i])
	}
	return out, nil
}

func (m *Memory) Tally(_ context.Context, batch string) (Tally, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.progressOf(batch).tally, nil
}
