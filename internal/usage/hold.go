package usage

import (
	"context"
	"time"
)

// Hold is a budget reservation that outlives the request that made it: a batch's estimate,
// held from the batch's creation until its results are charged (docs/files-batches.md,
// "Budgets"). It weighs on every day and month of its key while it is open: what it keeps
// starts at Amount, each charge of the batch draws on it (Budgets.Draw), and Release ends
// it; at Until (unix seconds) it ends by itself, released or not. What is kept with the
// batch's record is its ID, Key and Until.
type Hold struct {
	ID     string `json:"id"`
	Key    string `json:"k"` // the budget's: a key's id, a team's scope
	Budget Budget `json:"-"`
	Amount int64  `json:"-"`
	Until  int64  `json:"u"`
}

// NewHold is a hold of amount against b for key, open until until.
func NewHold(key string, b Budget, amount int64, until time.Time) Hold {
	return Hold{ID: newID(), Key: key, Budget: b, Amount: amount, Until: until.Unix()}
}

// hold is what a MemoryBudgets keeps of an open Hold: what it keeps, until when, and the
// ids of the draws it took.
type hold struct {
	left, until int64
	drawn       map[string]bool
}

// held is what key's open holds keep at now; those that ended go. m.mu is held.
func (m *MemoryBudgets) held(key string, now time.Time) int64 {
	var sum int64
	for id, h := range m.holds[key] {
		if h.until <= now.Unix() {
			delete(m.holds[key], id)
			continue
		}
		sum += h.left
	}
	return sum
}

// Hold implements Budgets.
func (m *MemoryBudgets) Hold(_ context.Context, h Hold) (Verdict, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now().UTC()
	if m.holds[h.Key][h.ID] != nil || h.Until <= now.Unix() {
		return Verdict{OK: true}, nil // taken already, or ended already: nothing to hold
	}
	held := m.held(h.Key, now)
	day, month := m.spent[period{h.Key, now.Format(DayLayout)}], m.spent[period{h.Key, now.Format("2006-01")}]
	if v := over(h.Budget, day+held, month+held, h.Amount); !v.OK {
		return v, nil
	}
	if m.holds == nil {
		m.holds = map[string]map[string]*hold{}
	}
	if m.holds[h.Key] == nil {
		m.holds[h.Key] = map[string]*hold{}
	}
	m.holds[h.Key][h.ID] = &hold{left: h.Amount, until: h.Until, drawn: map[string]bool{}}
	return Verdict{OK: true}, nil
}

// Draw implements Budgets.
func (m *MemoryBudgets) Draw(_ context.Context, h Hold, id string, cost int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if k := m.holds[h.Key][h.ID]; k != nil && !k.drawn[id] {
		k.left = max(k.left-cost, 0)
		k.drawn[id] = true
	}
	return nil
}

// Release implements Budgets.
func (m *MemoryBudgets) Release(_ context.Context, h Hold) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.holds[h.Key], h.ID)
	return nil
}

// holdsKey is the context key of WithHolds's holds.
type holdsKey struct{}

// WithHolds returns ctx carrying hs: the holds of the batch its request is part of (a line
// of an emulated batch, the read of a batch's results). Its budget reservations are taken
// within them (Reservation.Within).
func WithHolds(ctx context.Context, hs []Hold) context.Context {
	if len(hs) == 0 {
		return ctx
	}
	return context.WithValue(ctx, holdsKey{}, hs)
}

// HoldsOf is the holds WithHolds gave ctx's request.
func HoldsOf(ctx context.Context) []Hold {
	hs, _ := ctx.Value(holdsKey{}).([]Hold)
	return hs
}
