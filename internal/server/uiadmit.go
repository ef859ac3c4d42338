package server

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// admitRound is runs.Spec.Admit for the caller's key (nil with auth off, or for a key with no
// limits and no budget): each later round of a frontend run takes a request from the key's
// rate limits and must find its token limit and its budget not yet spent (DESIGN §6). The
// round's tokens and cost are counted with the run's when its request ends. It holds the
// key, not the echo context: the run may outlive the handler.
func (s *Server) admitRound(c echo.Context) func(context.Context, *llm.Request) error {
	key := callerKey(c)
	if key == nil {
		return nil
	}
	limited := s.o.Gate.Limiter != nil && (key.RPM > 0 || key.TPM > 0)
	budgeted := s.o.Usage.Budgets != nil && (key.DailyUSD > 0 || key.MonthlyUSD > 0)
	if !limited && !budgeted {
		return nil
	}
	return func(ctx context.Context, _ *llm.Request) error {
		if limited {
			if err := s.limitRound(ctx, key); err != nil {
				return err
			}
		}
		if budgeted {
			// A reservation of nothing: it passes while the key has budget left and holds none.
			r := usage.NewReservation(key.ID, usage.Budget{Daily: usage.Nano(key.DailyUSD), Monthly: usage.Nano(key.MonthlyUSD)}, 0, time.Now())
			v, err := s.o.Usage.Budgets.Reserve(ctx, r)
			if err != nil {
				return stateUnavailable()
			}
			if !v.OK {
				return budgetExceeded(key, v)
			}
		}
		return nil
	}
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
