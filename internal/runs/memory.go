package runs

import (
	"context"
	"sync"
	"time"
)

// Memory is a Store in the process: one replica (no Redis). Keys expire lazily, when next
// touched, and in a sweep at most once a minute. Safe for concurrent use.
type Memory struct {
	mu    sync.Mutex
	chats map[string]*memChat
	logs  map[string]*memLog // by chat + "\x00" + run
	swept time.Time
	// Now is the clock (nil: time.Now); tests move it to lapse leases.
	Now func() time.Time
}

type memChat struct {
	m       Meta
	owner   string
	lease   time.Time
	expires time.Time
}

type memLog struct {
	frames  []Frame
	last    int64
	expires time.Time
	wake    chan struct{} // closed and replaced when frames come
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{chats: map[string]*memChat{}, logs: map[string]*memLog{}}
}

func (s *Memory) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// chat returns the chat's record, nil when absent or expired. Under mu.
func (s *Memory) chat(id string, now time.Time) *memChat {
	c := s.chats[id]
	if c != nil && now.After(c.expires) {
		delete(s.chats, id)
		return nil
	}
	return c
}

// log returns the run's log, made on demand (a waiter may come before the first frame).
// Under mu.
func (s *Memory) log(chat, run string, now time.Time) *memLog {
	k := chat + "\x00" + run
	l := s.logs[k]
	if l != nil && now.After(l.expires) {
		close(l.wake)
		l = nil
	}
	if l == nil {
		// Expires unless written to: a waiter may make the log of a run that never writes.
		l = &memLog{wake: make(chan struct{}), expires: now.Add(time.Hour)}
		s.logs[k] = l
	}
	return l
}

func (s *Memory) sweep(now time.Time) {
	if now.Sub(s.swept) < time.Minute {
		return
	}
	s.swept = now
	for id, c := range s.chats {
		if now.After(c.expires) {
			delete(s.chats, id)
		}
	}
	for k, l := range s.logs {
		if now.After(l.expires) {
			close(l.wake)
			delete(s.logs, k)
		}
	}
}

func (c *memChat) active(now time.Time) bool { return !c.m.Done && now.Before(c.lease) }

func (s *Memory) Claim(_ context.Context, m Meta, owner string, lease, ttl time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.sweep(now)
	if c := s.chat(m.Chat, now); c != nil && c.active(now) && c.m.Key != m.Key {
		return ErrBusy
	}
	m.Seq, m.Done, m.Stop, m.Lapsed = 0, false, false, false
	s.chats[m.Chat] = &memChat{m: m, owner: owner, lease: now.Add(lease), expires: now.Add(ttl)}
	return nil
}

func (s *Memory) Lookup(_ context.Context, chat string) (*Meta, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	c := s.chat(chat, now)
	if c == nil {
		return nil, nil
	}
	m := c.m
	m.Lapsed = !m.Done && !now.Before(c.lease)
	return &m, nil
}

func (s *Memory) Append(_ context.Context, w Write) (Verdict, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	c := s.chat(w.Chat, now)
	if c == nil || c.m.Run != w.Run || c.owner != w.Owner || c.m.Done {
		return Verdict{Lost: true}, nil
	}
	s.append(c, w, now)
	return Verdict{Stop: c.m.Stop}, nil
}

// append stores w's new frames and ends or renews the run. Under mu.
func (s *Memory) append(c *memChat, w Write, now time.Time) {
	l := s.log(w.Chat, w.Run, now)
	grew := false
	for _, f := range w.Frames {
		if f.Seq <= l.last {
			continue // a retried batch
		}
		l.frames = append(l.frames, f)
		l.last, c.m.Seq, grew = f.Seq, f.Seq, true
	}
	if w.MaxFrames > 0 && len(l.frames) > w.MaxFrames {
		l.frames = append([]Frame(nil), l.frames[len(l.frames)-w.MaxFrames:]...)
	}
	c.m.Done = w.Done
	c.lease = now.Add(w.Lease)
	c.expires, l.expires = now.Add(w.TTL), now.Add(w.TTL)
	if grew || w.Done {
		close(l.wake)
		l.wake = make(chan struct{})
	}
}

func (s *Memory) Read(_ context.Context, chat, run string, after int64, n int) ([]Frame, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.read(chat, run, after, n), nil
}

func (s *Memory) read(chat, run string, after int64, n int) []Frame {
	l := s.logs[chat+"\x00"+run]
	if l == nil || s.now().After(l.expires) {
		return nil
	}
	var out []Frame
	for _, f := range l.frames {
		if f.Seq > after {
			out = append(out, f)
			if len(out) == n {
				break
			}
		}
	}
	return out
}

func (s *Memory) Wait(ctx context.Context, chat, run string, after int64, block time.Duration) ([]Frame, error) {
	t := time.NewTimer(block)
	defer t.Stop()
	for {
		s.mu.Lock()
		out := s.read(chat, run, after, 1024)
		wake := s.log(chat, run, s.now()).wake
		s.mu.Unlock()
		if len(out) > 0 {
			return out, nil
		}
		select {
		case <-wake:
		case <-t.C:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (s *Memory) Stop(_ context.Context, chat, run string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.chat(chat, s.now()); c != nil && c.m.Run == run && !c.m.Done {
		c.m.Stop = true
	}
	return nil
}

func (s *Memory) Reap(_ context.Context, w Write, seq int64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	c := s.chat(w.Chat, now)
	if c == nil || c.m.Run != w.Run || c.m.Done || c.m.Seq != seq || c.active(now) {
		return false, nil
	}
	s.append(c, w, now)
	return true, nil
}

func (s *Memory) Close() error { return nil }
