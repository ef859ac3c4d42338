package usage

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"sync"
	"time"
)

// Budget is a key's spending cap in nano-USD per UTC day and per UTC month; zero is no cap.
type Budget struct {
	Daily, Monthly int64
}

// Reservation is what one call holds of its key's budget until it is settled: Amount, the
// estimated cost, counted against the Day and Month it was made in. ID tells it from every
// other (NewReservation draws it): a store that may write a settle twice (after a timeout
// that landed) counts it once by its ID.
type Reservation struct {
	ID         string
	Key        string
	Day, Month string // "2006-01-02", "2006-01"
	Budget     Budget
	Amount     int64
	// Within is the ID of a Hold of the same Key that the call is part of (a batch's line,
	// the read of a batch's results): the call passes whatever the caps while that hold has
	// some left, and its cost is drawn from the hold when it settles ("": none).
	Within string
}

// NewReservation is a reservation of amount against b for key, made at now.
func NewReservation(key string, b Budget, amount int64, now time.Time) Reservation {
	now = now.UTC()
	return Reservation{ID: newID(), Key: key, Day: now.Format(DayLayout), Month: now.Format("2006-01"), Budget: b, Amount: amount}
}

// Verdict is the answer to a reservation. A refused one took nothing.
type Verdict struct {
	OK bool
	// Over is "daily" or "monthly": the cap that is spent, when !OK.
	Over string
	// Spent is what the period of Over holds (real costs and open reservations), when !OK.
	Spent int64
}

// Budgets reserves and settles. A call may go ahead while its key has some budget left in
// both periods (what it spent and what its open holds keep); its estimate is then
// reserved, so that concurrent calls see it, and replaced by the real cost when settled.
// Spending can therefore pass a cap by at most the last call's cost (one reservation, when
// estimates do not fall short). A Hold is a reservation that outlives its request (a
// batch's, docs/files-batches.md "Budgets"). Implementations are safe for concurrent use;
// an error means the store could not decide.
type Budgets interface {
	Reserve(ctx context.Context, r Reservation) (Verdict, error)
	// Settle replaces r's amount with the real cost.
	Settle(ctx context.Context, r Reservation, cost int64) error
	// Hold takes h when what h.Key spent in the period, its open holds and h.Amount fit
	// in each cap: h then weighs on every period of its key until it is released or
	// h.Until passes. Taking a hold twice (its ID) takes it once.
	Hold(ctx context.Context, h Hold) (Verdict, error)
	// Draw takes cost off what hold h keeps (never below zero), once for each id: the
	// reservation whose settle charged cost. A hold released or expired takes nothing.
	Draw(ctx context.Context, h Hold, id string, cost int64) error
	// Release ends hold h: what it kept weighs no more. Releasing twice is releasing once.
	Release(ctx context.Context, h Hold) error
}

// MemoryBudgets keeps the budgets of one replica. The zero value is ready. Safe for
// concurrent use.
type MemoryBudgets struct {
	mu     sync.Mutex
	spent  map[period]int64            // nano-USD
	newest string                      // the newest day seen: older periods are dropped when it changes
	holds  map[string]map[string]*hold // by key, then by the hold's ID
}

// period is one key's day ("2006-01-02") or month ("2006-01").
type period struct{ key, span string }

var _ Budgets = (*MemoryBudgets)(nil)

// Reserve implements Budgets.
func (m *MemoryBudgets) Reserve(_ context.Context, r Reservation) (Verdict, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.spent == nil {
		m.spent = map[period]int64{}
	}
	if r.Day > m.newest {
		// A new day: what is left of earlier days and months can no longer be reserved.
		m.newest = r.Day
		for p := range m.spent {
			if p.span != r.Day && p.span != r.Month {
				delete(m.spent, p)
			}
		}
	}
	d, mo := period{r.Key, r.Day}, period{r.Key, r.Month}
	held := m.held(r.Key, time.Now())
	if h := m.holds[r.Key][r.Within]; r.Within == "" || h == nil || h.left <= 0 {
		if v := over(r.Budget, m.spent[d]+held, m.spent[mo]+held, 0); !v.OK {
			return v, nil
		}
	}
	m.spent[d] += r.Amount
	m.spent[mo] += r.Amount
	return Verdict{OK: true}, nil
}

// over is the verdict on spending amount more in a day that holds day and a month that
// holds month: refused when a cap is reached (amount 0: some budget must be left) or would
// be passed.
func over(b Budget, day, month, amount int64) Verdict {
	switch {
	case b.Daily > 0 && (day >= b.Daily || day+amount > b.Daily):
		return Verdict{Over: "daily", Spent: day}
	case b.Monthly > 0 && (month >= b.Monthly || month+amount > b.Monthly):
		return Verdict{Over: "monthly", Spent: month}
	}
	return Verdict{OK: true}
}

// Settle implements Budgets. A reservation whose period was dropped is ignored.
func (m *MemoryBudgets) Settle(_ context.Context, r Reservation, cost int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range []period{{r.Key, r.Day}, {r.Key, r.Month}} {
		if _, ok := m.spent[p]; ok {
			m.spent[p] += cost - r.Amount
		}
	}
	return nil
}

// newID is a reservation's id: 96 random bits.
func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:])
}
