package limit

import (
	"context"
	"sync"
	"time"
)

// Memory is a Limiter kept in this process: the limits of one replica. The zero value is
// ready and uses the real clock. Safe for concurrent use.
type Memory struct {
	// Now is the clock; nil is time.Now.
	Now func() time.Time

	mu    sync.Mutex
	logs  map[string]*window
	swept time.Time // the last sweep
}

var _ Limiter = (*Memory)(nil)

// window is the log of one limit: reservations in time order, and their total cost.
type window struct {
	entries []entry
	sum     int64
	span    time.Duration // the window of the last reservation: sweep prunes with it
}

type entry struct {
	at   time.Time
	cost int64
	id   string
}

// prune drops the entries that left the window.
func (w *window) prune(now time.Time, span time.Duration) {
	n := 0
	for n < len(w.entries) && !w.entries[n].at.After(now.Add(-span)) {
		w.sum -= w.entries[n].cost
		n++
	}
	w.entries = w.entries[n:]
}

// wait is how long until cost more fits under r, given it does not now.
func (w *window) wait(now time.Time, r Rule, cost int64) time.Duration {
	need, freed := w.sum+cost-r.Limit, int64(0)
	for _, e := range w.entries {
		if freed += e.cost; freed >= need {
			return e.at.Add(r.Window).Sub(now)
		}
	}
	return r.Window
}

func (w *window) status(now time.Time, r Rule) Status {
	s := Status{Limit: r.Limit, Remaining: max(r.Limit-w.sum, 0)}
	if n := len(w.entries); n > 0 {
		s.Reset = w.entries[n-1].at.Add(r.Window).Sub(now)
	}
	return s
}

// sweep drops the logs whose entries all left their windows, at most once a minute: the
// names are not only the keys' (a bounded set) but also the addresses and tokens the
// sign-in throttle saw (auth.Throttle), which an attacker chooses; without it each would
// hold a log for good.
func (m *Memory) sweep(now time.Time) {
	if now.Sub(m.swept) < time.Minute {
		return
	}
	m.swept = now
	for name, w := range m.logs {
		if w.prune(now, w.span); len(w.entries) == 0 {
			delete(m.logs, name)
		}
	}
}

func (m *Memory) log(name string) *window {
	if m.logs == nil {
		m.logs = map[string]*window{}
	}
	w := m.logs[name]
	if w == nil {
		w = &window{}
		m.logs[name] = w
	}
	return w
}

// Reserve implements Limiter.
func (m *Memory) Reserve(_ context.Context, a Ask) (Result, error) {
	now := time.Now()
	if m.Now != nil {
		now = m.Now()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	var res Result
	res.OK = true
	var req, tok *window
	if a.Requests.Limit > 0 {
		req = m.log(a.Key + ":rpm")
		req.span = a.Requests.Window
		req.prune(now, a.Requests.Window)
		if req.sum+1 > a.Requests.Limit {
			res.OK = false
			res.RetryAfter = req.wait(now, a.Requests, 1)
		}
	}
	if a.Tokens.Limit > 0 {
		tok = m.log(a.Key + ":tpm")
		tok.span = a.Tokens.Window
		tok.prune(now, a.Tokens.Window)
		switch {
		case a.Cost > a.Tokens.Limit:
			res.OK, res.Never = false, true
		case tok.sum+a.Cost > a.Tokens.Limit:
			res.OK = false
			res.RetryAfter = max(res.RetryAfter, tok.wait(now, a.Tokens, a.Cost))
		}
	}
	if res.OK {
		if req != nil {
			req.entries = append(req.entries, entry{at: now, cost: 1, id: a.ID})
			req.sum++
		}
		if tok != nil {
			tok.entries = append(tok.entries, entry{at: now, cost: a.Cost, id: a.ID})
			tok.sum += a.Cost
		}
	}
	if req != nil {
		res.Requests = req.status(now, a.Requests)
	}
	if tok != nil {
		res.Tokens = tok.status(now, a.Tokens)
	}
	return res, nil
}

// Len is the number of logs held, those whose entries all left their windows but were not
// swept yet included.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.logs)
}

// Release implements Limiter.
func (m *Memory) Release(_ context.Context, key, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, name := range []string{key + ":rpm", key + ":tpm"} {
		w := m.logs[name]
		if w == nil {
			continue
		}
		for i := len(w.entries) - 1; i >= 0; i-- { // from the newest, as Reconcile
			if e := w.entries[i]; e.id == id {
				w.sum -= e.cost
				w.entries = append(w.entries[:i], w.entries[i+1:]...)
				break
			}
		}
	}
	return nil
}

// Reconcile implements Limiter.
func (m *Memory) Reconcile(_ context.Context, key, id string, _ Rule, used int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.logs[key+":tpm"]
	if w == nil {
		return nil
	}
	// From the newest: a call settles soon after its reservation, so the entry is near the
	// end of a log that holds a whole window of reservations (300,000 at 5,000 requests/s).
	for i := len(w.entries) - 1; i >= 0; i-- {
		if e := &w.entries[i]; e.id == id {
			w.sum += used - e.cost
			e.cost = used
			return nil
		}
	}
	return nil
}
