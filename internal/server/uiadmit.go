package server

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// admitRound is the runs.Admitter of the caller's key (nil with auth off, or for a key with no
// limits and no budget): each later round of a frontend run takes a request from the key's
// rate limits and must find its token limit and its budget not yet spent (DESIGN §6). For
// the budget, what the run's rounds cost beyond what the request reserved at its start is
// reserved as the run goes, so the run sees its own spending, not only other requests'; the
// round's tokens and cost are counted with the run's when its request ends, which settles
// those reservations (roundAdmit.reservations). It holds the key, not the echo context: the
// run may outlive the handler.
func (s *Server) admitRound(c echo.Context) *roundAdmit {
	key := callerKey(c)
	if key == nil {
		return nil
	}
	a := &roundAdmit{s: s, key: key,
		limited:  s.o.Gate.Limiter != nil && (key.RPM > 0 || key.TPM > 0),
		budgeted: s.o.Usage.Budgets != nil && (key.DailyUSD > 0 || key.MonthlyUSD > 0)}
	if !a.limited && !a.budgeted {
		return nil
	}
	if m := meterOf(c); m != nil {
		for _, r := range m.Held {
			a.held += r.Amount // the start's reservation covers the first rounds' cost
		}
	}
	return a
}

// roundAdmit checks the rounds of one run. Its admit runs on the run's goroutine; the
// request's handler reads reservations once the run ended.
type roundAdmit struct {
	s                 *Server
	key               *auth.Key
	limited, budgeted bool

	mu   sync.Mutex
	held int64 // nano-USD reserved for the run so far
	rsv  []usage.Reservation
}

// Admit is runs.Admitter; spent is what the run's rounds cost so far.
func (a *roundAdmit) Admit(ctx context.Context, _ *llm.Request, spent int64) error {
	if a.limited {
		if err := a.s.limitRound(ctx, a.key); err != nil {
			return err
		}
	}
	if !a.budgeted {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	// Reserved: the cost beyond what is held (nothing at all passes while the key has budget
	// left, and holds none).
	r := usage.NewReservation(a.key.ID, usage.Budget{Daily: usage.Nano(a.key.DailyUSD), Monthly: usage.Nano(a.key.MonthlyUSD)},
		max(spent-a.held, 0), time.Now())
	v, err := a.s.o.Usage.Budgets.Reserve(ctx, r)
	if err != nil {
		return stateUnavailable()
	}
	if !v.OK {
		return budgetExceeded(a.key, v)
	}
	if r.Amount > 0 {
		a.held += r.Amount
		a.rsv = append(a.rsv, r)
	}
	return nil
}

// reservations are the budget reservations the rounds took, for the request's settlement.
func (a *roundAdmit) reservations() []usage.Reservation {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rsv
}

// limitRound takes one request of key's rate limit, and checks its token limit is not spent.
func (s *Server) limitRound(ctx context.Context, key *auth.Key) error {
	a, window := s.o.Gate.ask(key, 0)
	res, err := s.o.Gate.Limiter.Reserve(ctx, a)
	if err != nil {
		return stateUnavailable()
	}
	if !res.OK {
		return limited(key, a, res, window, http.Header{}) // no headers: the stream is under way
	}
	return nil
}
