package admit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/guard"
	"github.com/sluice-gw/sluice/internal/limit"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// Policy is the keys' limits and budgets. The zero value admits every request. It is
// read-only once built; safe for concurrent use.
type Policy struct {
	// Limiter enforces the keys' rpm and tpm; nil: no limits.
	Limiter limit.Limiter
	// Window is the span of rpm and tpm; 0: a minute.
	Window time.Duration
	// Budgets enforces the keys' daily and monthly budgets; nil: none.
	Budgets usage.Budgets
	// Prices prices the estimate a budget reservation holds and what a request cost; nil:
	// the built-in table.
	Prices *usage.Prices
	// Store records the account per key, alias, target and day (Ticket.Settle); nil: not
	// recorded.
	Store usage.Store
	// Guards are the guardrails of the aliases and the keys (Ticket.Admit).
	Guards guard.Catalog
}

// Held is what a request holds of its key's token limit until it is reconciled.
type Held struct {
	id     string
	tokens limit.Rule
}

// Limited reports whether key has rate limits to check.
func (p *Policy) Limited(key *auth.Key) bool {
	return p.Limiter != nil && (key.RPM > 0 || key.TPM > 0)
}

// Reserve takes one request and cost tokens from key's limits. It returns the limiter's
// verdict, whose statuses the x-ratelimit-* headers tell on refusals and answers alike; a
// refusal is a RateLimited error (Refused), a limiter that cannot decide an Unavailable one.
// Without limits it holds nothing and the verdict is the zero Result.
func (p *Policy) Reserve(ctx context.Context, key *auth.Key, cost int64) (*Held, limit.Result, error) {
	if !p.Limited(key) {
		return nil, limit.Result{}, nil
	}
	a := p.ask(key, cost)
	res, err := p.Limiter.Reserve(ctx, a)
	if err != nil {
		return nil, res, Unavailable()
	}
	if !res.OK {
		return nil, res, p.refused(key, a, res)
	}
	return &Held{id: a.ID, tokens: a.Tokens}, res, nil
}

// Reconcile sets h, key's token reservation, to the tokens the call used.
func (p *Policy) Reconcile(ctx context.Context, key *auth.Key, h *Held, used int64) {
	if h == nil || key.TPM <= 0 {
		return
	}
	_ = p.Limiter.Reconcile(ctx, key.ID, h.id, h.tokens, used)
}

// Span is the window of rpm and tpm (Window, or a minute).
func (p *Policy) Span() time.Duration {
	if p.Window <= 0 {
		return time.Minute
	}
	return p.Window
}

// ask is a reservation of one request and cost tokens of key's limits, with a fresh id.
func (p *Policy) ask(key *auth.Key, cost int64) limit.Ask {
	var b [8]byte
	_, _ = rand.Read(b[:])
	w := p.Span()
	return limit.Ask{Key: key.ID, ID: hex.EncodeToString(b[:]), Requests: limit.Rule{Limit: key.RPM, Window: w},
		Tokens: limit.Rule{Limit: key.TPM, Window: w}, Cost: cost}
}

// refused is the 429 of a refused reservation. The message names the key and the limit,
// never the key's secret. A request too large for the limit (res.Never) has no RetryAfter:
// waiting cannot help.
func (p *Policy) refused(key *auth.Key, a limit.Ask, res limit.Result) error {
	per := "per minute"
	if w := p.Span(); w != time.Minute {
		per = "per " + w.String()
	}
	e := &llm.Error{Kind: llm.RateLimited, Code: "rate_limit_exceeded", Type: "rate_limit_error", RetryAfter: res.RetryAfter}
	switch {
	case res.Never:
		e.RetryAfter = 0
		e.Message = fmt.Sprintf("Request too large for key '%s' on tokens %s: limit %d, requested about %d. "+
			"Send a shorter prompt or a lower max_tokens.", key.Name, per, a.Tokens.Limit, a.Cost)
	case a.Requests.Limit > 0 && res.Requests.Remaining == 0:
		e.Message = fmt.Sprintf("Rate limit reached for key '%s' on requests %s: limit %d. Try again in %s.",
			key.Name, per, a.Requests.Limit, res.RetryAfter.Round(time.Millisecond))
	default:
		e.Message = fmt.Sprintf("Rate limit reached for key '%s' on tokens %s: limit %d, remaining %d, requested about %d. Try again in %s.",
			key.Name, per, a.Tokens.Limit, res.Tokens.Remaining, a.Cost, res.RetryAfter.Round(time.Millisecond))
	}
	return e
}

// DefaultOutputTokens is reserved for the answer of a request that sets no max_tokens; the
// reservation is reconciled with the real usage after the call.
const DefaultOutputTokens = 512

// Cost estimates the tokens of a call before it is made: the prompt at about four bytes a
// token of its body (the JSON included, so it errs high), plus the answer's maxTokens for each
// of n choices (none for embeddings). Without maxTokens, the default is capped at the key's
// tpm, so that a small limit does not refuse every such request as too large.
func Cost(bodyLen int, maxTokens, n int64, embeddings bool, tpm int64) int64 {
	prompt := int64(bodyLen+3) / 4
	if embeddings {
		return prompt
	}
	out := maxTokens
	capped := out <= 0
	if capped {
		out = DefaultOutputTokens
	}
	total := prompt + out*min(max(n, 1), 128)
	if capped && tpm > 0 {
		total = max(min(total, tpm), prompt)
	}
	return total
}

// Budgeted reports whether key has a budget to check.
func (p *Policy) Budgeted(key *auth.Key) bool {
	return p.Budgets != nil && key != nil && (key.DailyUSD > 0 || key.MonthlyUSD > 0)
}

// ReserveBudget reserves what a round of chain may cost (Estimate) against key's budget at
// now, before any provider is called; a key whose day or month is spent gets 429
// budget_exceeded. The caller settles the reservation with the real cost
// (usage.Meter.Settle). ok is false when key has no budget. req is nil for embeddings.
func (p *Policy) ReserveBudget(ctx context.Context, key *auth.Key, chain *fallback.Chain, req *llm.Request, bodyLen int,
	now time.Time) (r usage.Reservation, ok bool, err error) {
	if !p.Budgeted(key) {
		return r, false, nil
	}
	r = usage.NewReservation(key.ID, budget(key), p.Estimate(chain, req, bodyLen), now)
	v, err := p.Budgets.Reserve(ctx, r)
	if err != nil {
		return r, false, &llm.Error{Kind: llm.Unavailable, Status: http.StatusServiceUnavailable, Code: "redis_unavailable",
			Type: "server_error", Message: "The gateway cannot reach its shared state (Redis) to check the key's budget, " +
				"and is configured to refuse requests meanwhile (redis.on_failure: closed). Retry shortly."}
	}
	if !v.OK {
		return r, false, Exceeded(key, v)
	}
	return r, true, nil
}

func budget(key *auth.Key) usage.Budget {
	return usage.Budget{Daily: usage.Nano(key.DailyUSD), Monthly: usage.Nano(key.MonthlyUSD)}
}

// Estimate is what a round may cost, in nano-USD: the prompt at about four bytes a token of
// the body, and the answer's max_tokens (DefaultOutputTokens when unset) for each of n
// choices, at the price of the most expensive target of the chain, since a fallback may land
// on any of them.
func (p *Policy) Estimate(chain *fallback.Chain, req *llm.Request, bodyLen int) int64 {
	u := llm.Usage{PromptTokens: (bodyLen + 3) / 4}
	if req != nil {
		out := DefaultOutputTokens
		switch {
		case req.MaxCompletionTokens != nil:
			out = *req.MaxCompletionTokens
		case req.MaxTokens != nil:
			out = *req.MaxTokens
		}
		u.CompletionTokens = out * min(max(req.N, 1), 128)
	}
	var most int64
	for t := range chain.All() {
		pr, _ := p.Prices.Lookup(t.Name, t.Model)
		most = max(most, usage.Cost(pr, u))
	}
	return most
}

// Exceeded is the 429 of a spent budget: not worth a retry before the period ends (the edge
// sends x-should-retry: false with every RateLimited error it answers).
func Exceeded(key *auth.Key, v usage.Verdict) error {
	capUSD, period := key.DailyUSD, "day (UTC)"
	if v.Over == "monthly" {
		capUSD, period = key.MonthlyUSD, "month (UTC)"
	}
	return &llm.Error{Kind: llm.RateLimited, Code: "budget_exceeded", Type: "insufficient_quota",
		Message: fmt.Sprintf("Key '%s' has used its budget of $%.2f for this %s ($%.4f spent or reserved). "+
			"It is available again when the %s ends.", key.Name, capUSD, period, usage.USD(v.Spent), period)}
}
