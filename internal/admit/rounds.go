package admit

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// Rounds checks the later rounds of one frontend run of key (runs.Admitter): each takes a
// request from the rate limits of the key and its team and must find their token limits
// and budgets not yet spent. For the budget, what the run's rounds cost beyond what its request reserved at the
// start is reserved as the run goes, so the run sees its own spending, not only other
// requests'; the request settles those reservations (Reservations) with the run's cost when
// it ends. It holds the key, not the request: the run may outlive the handler. Admit runs on
// the run's goroutine, Reservations on the request's once the run ended.
type Rounds struct {
	p                 *Policy
	key               *auth.Key
	team              *auth.Team // nil: none
	limited, budgeted bool

	mu   sync.Mutex
	held int64 // nano-USD reserved for the run so far
	rsv  []usage.Reservation
}

// Rounds is the checker of the run of key (of team, nil: none), whose request holds the
// budget reservations held (they cover the first rounds' cost); nil for a key with no
// limits and no budget, its team's included.
func (p *Policy) Rounds(key *auth.Key, team *auth.Team, held []usage.Reservation) *Rounds {
	if key == nil {
		return nil
	}
	r := &Rounds{p: p, key: key, team: team, limited: p.limited(key, team), budgeted: p.Budgeted(key, team)}
	if !r.limited && !r.budgeted {
		return nil
	}
	for _, h := range held {
		if h.Key == key.ID || team == nil { // each scope holds the same amount: count one
			r.held += h.Amount
		}
	}
	return r
}

// Admit is runs.Admitter; spent is what the run's rounds cost so far.
func (r *Rounds) Admit(ctx context.Context, _ *llm.Request, spent int64) error {
	if r.limited {
		if _, _, err := r.p.Reserve(ctx, r.key, r.team, 0); err != nil {
			return err
		}
	}
	return r.Spend(ctx, spent)
}

// Spend is Admit without the rate limits: the budgets only, for a Realtime session's turns
// (package live), which its connect took a request for.
func (r *Rounds) Spend(ctx context.Context, spent int64) error {
	if !r.budgeted {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// Reserved: the cost beyond what is held (nothing at all passes while the key has budget
	// left, and holds none).
	amount := max(spent-r.held, 0)
	rs, err := r.p.reserveBudgets(ctx, scopes(r.key, r.team), amount, time.Now())
	if err != nil {
		if llm.KindOf(err) == llm.Unavailable {
			return Unavailable()
		}
		return err
	}
	if amount > 0 {
		r.held += amount
		r.rsv = append(r.rsv, rs...)
	}
	return nil
}

// Reservations are the budget reservations the rounds took, for the request's settlement.
func (r *Rounds) Reservations() []usage.Reservation {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rsv
}

// AuthError is what a client is told about its key: never the key, nor whether a hash
// matched something. failOpen is redis.on_failure: open.
func AuthError(err error, failOpen bool) error {
	e := &llm.Error{Kind: llm.Unauthenticated, Code: "invalid_api_key", Type: "invalid_request_error"}
	switch {
	case errors.Is(err, auth.ErrMissing):
		e.Message = "You didn't provide an API key. Send it as 'Authorization: Bearer KEY' or in the x-api-key header."
	case errors.Is(err, auth.ErrInvalid):
		e.Message = "Incorrect API key provided."
	case errors.Is(err, auth.ErrExpired):
		e.Message = "The API key has expired."
	case failOpen:
		// Serving on without Redis covers the keys this replica saw lately, not this one.
		return &llm.Error{Kind: llm.Unavailable, Status: http.StatusServiceUnavailable, Code: "redis_unavailable",
			Type: "server_error", Message: "The gateway cannot reach its key store (Redis) to check this API key. Retry shortly."}
	default:
		return Unavailable()
	}
	return e
}

// NotAllowed is the 403 of a key that may not use model.
func NotAllowed(model string) error {
	return &llm.Error{Kind: llm.Invalid, Status: http.StatusForbidden, Param: "model", Code: "model_not_allowed",
		Type: "invalid_request_error", Message: "This API key is not allowed to use the model '" + model + "'."}
}

// Unavailable is the 503 of a request the shared state (Redis) could not check.
func Unavailable() error {
	return &llm.Error{Kind: llm.Unavailable, Status: http.StatusServiceUnavailable, Code: "redis_unavailable",
		Type: "server_error", Message: "The gateway cannot reach its shared state (Redis) to check the API key " +
			"or its rate limits, and is configured to refuse requests meanwhile (redis.on_failure: closed). Retry shortly."}
}
