package usage

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Labels say whose and what a call was: the key's id ("" when auth is off), the model the
// client asked for (an alias, or provider/model), the target that served it ("" when none
// did), and the key's team ("" for none, issue 37).
type Labels struct {
	Key, Alias, Target string
	Team               string
}

// Counts are the counters of one row of the account. CostNano is in nano-USD; the tokens are
// the prompt and the answer. The prompt tokens include those read from the provider's prompt
// cache (also counted in CachedTokens) and those written to it (also in CacheWriteTokens, of
// which CacheWrite1hTokens with the 1-hour lifetime), each priced at its own rate (issue 46);
// SavedNano is what the prompt cache saved against the input price, in nano-USD (Saved:
// negative where writes cost more than reads saved). Estimated
// counts the requests whose usage the provider did not report; Fallbacks those served after
// more than one attempt; Errors those that ended in an error other than the client leaving.
// CacheHits counts the requests answered from the response cache (no provider called), and
// SavedTokens the tokens those answers did not spend.
type Counts struct {
	Requests     int64
	InputTokens  int64
	OutputTokens int64
	CachedTokens int64
	CostNano     int64
	Errors       int64
	Fallbacks    int64
	Estimated    int64
	CacheHits    int64
	SavedTokens  int64

	CacheWriteTokens   int64
	CacheWrite1hTokens int64
	SavedNano          int64
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	c.Requests += o.Requests
	c.InputTokens += o.InputTokens
	c.OutputTokens += o.OutputTokens
	c.CachedTokens += o.CachedTokens
	c.CostNano += o.CostNano
	c.Errors += o.Errors
	c.Fallbacks += o.Fallbacks
	c.Estimated += o.Estimated
	c.CacheHits += o.CacheHits
	c.SavedTokens += o.SavedTokens
	c.CacheWriteTokens += o.CacheWriteTokens
	c.CacheWrite1hTokens += o.CacheWrite1hTokens
	c.SavedNano += o.SavedNano
}

// Row is one row of a day's account.
type Row struct {
	Labels
	Counts
}

// Store keeps the account per day. Implementations are safe for concurrent use.
type Store interface {
	// Add adds c to the row of l on day ("2006-01-02", UTC).
	Add(ctx context.Context, day string, l Labels, c Counts) error
	// Rows calls fn for every row of each of days.
	Rows(ctx context.Context, days []string, fn func(day string, r Row)) error
}

// DayLayout is the format of a day in the account.
const DayLayout = "2006-01-02"

// Day is t's day in the account (UTC, DayLayout). The last day asked for is kept: every
// request's account asks for today's (issue 51: no formatting and no allocation per call).
func Day(t time.Time) string {
	d := t.Unix()
	if d < 0 {
		return t.UTC().Format(DayLayout)
	}
	d /= 86400
	if c := lastDay.Load(); c != nil && c.n == d {
		return c.s
	}
	c := &day{n: d, s: t.UTC().Format(DayLayout)}
	lastDay.Store(c)
	return c.s
}

// day is a day of the account and its number since the epoch, for Day.
type day struct {
	n int64
	s string
}

var lastDay atomic.Pointer[day]

// Retention is how long the account keeps a day.
const Retention = 400 * 24 * time.Hour

// Memory is a Store in this process: the account of one replica, gone at restart. The zero
// value is ready. Safe for concurrent use.
type Memory struct {
	// Now is the clock of the retention; nil is time.Now.
	Now func() time.Time

	mu     sync.Mutex
	days   map[string]map[Labels]*Counts
	pruned string // the day the retention was last applied
}

var _ Store = (*Memory)(nil)

// Add implements Store.
func (m *Memory) Add(_ context.Context, day string, l Labels, c Counts) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prune()
	if m.days == nil {
		m.days = map[string]map[Labels]*Counts{}
	}
	rows := m.days[day]
	if rows == nil {
		rows = map[Labels]*Counts{}
		m.days[day] = rows
	}
	row := rows[l]
	if row == nil {
		row = &Counts{}
		rows[l] = row
	}
	row.Add(c)
	return nil
}

// prune forgets the days past the retention, once a day.
func (m *Memory) prune() {
	now := time.Now()
	if m.Now != nil {
		now = m.Now()
	}
	today := Day(now)
	if m.pruned == today {
		return
	}
	m.pruned = today
	oldest := now.UTC().Add(-Retention).Format(DayLayout)
	for d := range m.days {
		if d < oldest {
			delete(m.days, d)
		}
	}
}

// Rows implements Store.
func (m *Memory) Rows(_ context.Context, days []string, fn func(day string, r Row)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, d := range days {
		for l, c := range m.days[d] {
			fn(d, Row{Labels: l, Counts: *c})
		}
	}
	return nil
}

// recordKey is the context key of WithRecord's id.
type recordKey struct{}

// WithRecord returns ctx carrying id as the id of the account record of its request: a
// shared store (Redis) adds a record of an id once, however often it is added, for as long
// as it remembers ids (an hour). The emulated batches' runner gives each line's request the
// id of its batch and line, so a line run twice (its replica died after the charge, before
// the result was written) is charged once. Memory ignores it: one process, where a line
// runs again only after a restart, which empties it.
func WithRecord(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, recordKey{}, id)
}

// RecordOf is the record id WithRecord gave ctx's request, "" for none.
func RecordOf(ctx context.Context) string {
	id, _ := ctx.Value(recordKey{}).(string)
	return id
}
