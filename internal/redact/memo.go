package redact

import (
	"sync"
	"sync/atomic"
)

// Memo is Redact with a memory of the short texts it was given: a log's values repeat (a
// client's user agent, a path, a key's name, an error's text), and each cost a window's run
// before, some 1% of the gateway's CPU with the request log on. It keeps up to max texts of
// at most memoLen bytes, then starts over; a longer text is masked each time. Safe for
// concurrent use. A Memo of nil Rules masks nothing, as nil Rules do.
type Memo struct {
	r   *Rules
	max int64
	n   atomic.Int64
	m   atomic.Pointer[sync.Map] // text → what Redact made of it
}

// memoLen is the longest text a Memo keeps.
const memoLen = 256

// Memo is a Memo of r that keeps up to max texts.
func (r *Rules) Memo(max int) *Memo {
	m := &Memo{r: r, max: int64(max)}
	m.m.Store(new(sync.Map))
	return m
}

// Redact is r.Redact(text), from memory when text was seen since the memory last started over.
func (m *Memo) Redact(text string) string {
	if m.r == nil || text == "" {
		return text
	}
	if len(text) > memoLen {
		return m.r.Redact(text)
	}
	seen := m.m.Load()
	if v, ok := seen.Load(text); ok {
		return v.(string)
	}
	out := m.r.Redact(text)
	if m.n.Add(1) > m.max {
		// Full: start over. Racing callers may store into the old map, which is then dropped.
		m.n.Store(0)
		seen = new(sync.Map)
		m.m.Store(seen)
	}
	seen.Store(text, out)
	return out
}
