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
	// Teams are the keys' teams, whose model access, limits and budget a key's request
	// passes too; nil: none, and a key naming a team is refused.
	Teams *auth.Teams
}

// Held is what a request holds of its key's and its team's token limits until it is
// reconciled: one reservation id in each scope's logs.
type Held struct {
	id     string
	scopes []scope // the team's, then the key's: those with limits
	tokens []limit.Rule
}

// scope is whose limits and budget a check counts against: a key, or the team of one.
type scope struct {
	what, name string // "key" or "team", and its name, for the refusals
	log        string // its limit logs' and budget counters' name: the key's id, Team.Scope
	rpm, tpm   int64
	budget     usage.Budget
	daily      float64 // USD, for the refusals
	monthly    float64
}

func keyScope(k *auth.Key) scope {
	return scope{what: "key", name: k.Name, log: k.ID, rpm: k.RPM, tpm: k.TPM, daily: k.DailyUSD, monthly: k.MonthlyUSD,
		budget: usage.Budget{Daily: usage.Nano(k.DailyUSD), Monthly: usage.Nano(k.MonthlyUSD)}}
}

func teamScope(t *auth.Team) scope {
	return scope{what: "team", name: t.Name, log: t.Scope(), rpm: t.RPM, tpm: t.TPM, daily: t.DailyUSD, monthly: t.MonthlyUSD,
		budget: usage.Budget{Daily: usage.Nano(t.DailyUSD), Monthly: usage.Nano(t.MonthlyUSD)}}
}

// scopes are the team's scope, then the key's; team nil: the key's alone.
func scopes(key *auth.Key, team *auth.Team) []scope {
	if team == nil {
		return []scope{keyScope(key)}
	}
	return []scope{teamScope(team), keyScope(key)}
}

// Limited reports whether key has rate limits to check.
func (p *Policy) Limited(key *auth.Key) bool {
	return p.Limiter != nil && (key.RPM > 0 || key.TPM > 0)
}

// limited reports whether key or team (nil: none) has rate limits to check.
func (p *Policy) limited(key *auth.Key, team *auth.Team) bool {
	return p.Limited(key) || p.Limiter != nil && team != nil && (team.RPM > 0 || team.TPM > 0)
}

// Reserve takes one request and cost tokens from the limits of key and of its team (nil:
// none). It returns the limiter's verdict, whose statuses the x-ratelimit-* headers tell on
// refusals and answers alike (the key's, or the team's when it refused or the key has no
// limits); a refusal is a RateLimited error naming the key or the team, a limiter that
// cannot decide an Unavailable one. Without limits it holds nothing and the verdict is the
// zero Result.
//
// The team's and the key's logs live under different hash tags (a key may change team, and
// a team's keys are many), so one script cannot check both atomically on Redis Cluster.
// The team is reserved first, then the key; when the key refuses, the team's reservation
// is released (limit.Limiter.Release). Team first: under load the shared team limit is the
// one that refuses, and its refusal leaves nothing to undo. Between the two steps the
// team's log may hold a reservation that is then released: a concurrent request may be
// refused for it, never one admitted over the limit.
func (p *Policy) Reserve(ctx context.Context, key *auth.Key, team *auth.Team, cost int64) (*Held, limit.Result, error) {
	if !p.limited(key, team) {
		return nil, limit.Result{}, nil
	}
	id := newAskID()
	h := &Held{id: id}
	var shown limit.Result
	for _, sc := range scopes(key, team) {
		if sc.rpm <= 0 && sc.tpm <= 0 {
			continue
		}
		a := p.ask(sc, id, cost)
		res, err := p.Limiter.Reserve(ctx, a)
		if err != nil || !res.OK {
			p.release(ctx, h)
			if err != nil {
				return nil, res, Unavailable()
			}
			return nil, res, p.refused(sc, a, res)
		}
		h.scopes, h.tokens = append(h.scopes, sc), append(h.tokens, a.Tokens)
		shown = res
	}
	return h, shown, nil
}

// release gives back what h holds: a request another scope refused.
func (p *Policy) release(ctx context.Context, h *Held) {
	for _, sc := range h.scopes {
		_ = p.Limiter.Release(ctx, sc.log, h.id)
	}
}

// Reconcile sets h, the token reservations of a key and its team, to the tokens the call
// used.
func (p *Policy) Reconcile(ctx context.Context, h *Held, used int64) {
	if h == nil {
		return
	}
	for i, sc := range h.scopes {
		if sc.tpm > 0 {
			_ = p.Limiter.Reconcile(ctx, sc.log, h.id, h.tokens[i], used)
		}
	}
}

// Span is the window of rpm and tpm (Window, or a minute).
func (p *Policy) Span() time.Duration {
	if p.Window <= 0 {
		return time.Minute
	}
	return p.Window
}

// newAskID is a reservation's id: one for the key's and the team's logs.
func newAskID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ask is the reservation id of one request and cost tokens of sc's limits.
func (p *Policy) ask(sc scope, id string, cost int64) limit.Ask {
	w := p.Span()
	return limit.Ask{Key: sc.log, ID: id, Requests: limit.Rule{Limit: sc.rpm, Window: w},
		Tokens: limit.Rule{Limit: sc.tpm, Window: w}, Cost: cost}
}

// refused is the 429 of a refused reservation. The message names the key or the team and
// the limit, never the key's secret. A request too large for the limit (res.Never) has no
// RetryAfter: waiting cannot help.
func (p *Policy) refused(sc scope, a limit.Ask, res limit.Result) error {
	per := "per minute"
	if w := p.Span(); w != time.Minute {
		per = "per " + w.String()
	}
	e := &llm.Error{Kind: llm.RateLimited, Code: "rate_limit_exceeded", Type: "rate_limit_error", RetryAfter: res.RetryAfter}
	switch {
	case res.Never:
		e.RetryAfter = 0
		e.Message = fmt.Sprintf("Request too large for %s '%s' on tokens %s: limit %d, requested about %d. "+
			"Send a shorter prompt or a lower max_tokens.", sc.what, sc.name, per, a.Tokens.Limit, a.Cost)
	case a.Requests.Limit > 0 && res.Requests.Remaining == 0:
		e.Message = fmt.Sprintf("Rate limit reached for %s '%s' on requests %s: limit %d. Try again in %s.",
			sc.what, sc.name, per, a.Requests.Limit, res.RetryAfter.Round(time.Millisecond))
	default:
		e.Message = fmt.Sprintf("Rate limit reached for %s '%s' on tokens %s: limit %d, remaining %d, requested about %d. Try again in %s.",
			sc.what, sc.name, per, a.Tokens.Limit, res.Tokens.Remaining, a.Cost, res.RetryAfter.Round(time.Millisecond))
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

// Budgeted reports whether key or its team (nil: none) has a budget to check.
func (p *Policy) Budgeted(key *auth.Key, team *auth.Team) bool {
	return p.Budgets != nil && key != nil && (key.DailyUSD > 0 || key.MonthlyUSD > 0 ||
		team != nil && (team.DailyUSD > 0 || team.MonthlyUSD > 0))
}

// ReserveBudget reserves what a round of chain may cost (Estimate) against the budgets of
// key and of its team (nil: none) at now, before any provider is called; a key or team
// whose day or month is spent gets 429 budget_exceeded. The caller settles the
// reservations with the real cost (usage.Meter.Settle); there are none when neither has a
// budget. req is nil for embeddings.
func (p *Policy) ReserveBudget(ctx context.Context, key *auth.Key, team *auth.Team, chain *fallback.Chain, req *llm.Request,
	bodyLen int, now time.Time) ([]usage.Reservation, error) {
	if !p.Budgeted(key, team) {
		return nil, nil
	}
	return p.reserveBudgets(ctx, scopes(key, team), p.Estimate(chain, req, bodyLen), now)
}

// reserveBudgets reserves amount against each scope with a budget, in order: the team's,
// then the key's, for the reasons of Reserve (their counters live under different hash
// tags). When one refuses, those taken are settled at zero: released.
func (p *Policy) reserveBudgets(ctx context.Context, scs []scope, amount int64, now time.Time) ([]usage.Reservation, error) {
	var held []usage.Reservation
	for _, sc := range scs {
		if sc.budget == (usage.Budget{}) {
			continue
		}
		r := usage.NewReservation(sc.log, sc.budget, amount, now)
		for _, h := range usage.HoldsOf(ctx) {
			if h.Key == sc.log {
				r.Within = h.ID
			}
		}
		v, err := p.Budgets.Reserve(ctx, r)
		if err != nil || !v.OK {
			for _, h := range held {
				_ = p.Budgets.Settle(ctx, h, 0)
			}
			return nil, refusal(sc, v, err)
		}
		held = append(held, r)
	}
	return held, nil
}

// refusal is the error of a budget's refusal v of sc, or of err, a store that could not
// decide.
func refusal(sc scope, v usage.Verdict, err error) error {
	if err != nil {
		return &llm.Error{Kind: llm.Unavailable, Status: http.StatusServiceUnavailable, Code: "redis_unavailable",
			Type: "server_error", Message: "The gateway cannot reach its shared state (Redis) to check the key's budget, " +
				"and is configured to refuse requests meanwhile (redis.on_failure: closed). Retry shortly."}
	}
	return exceeded(sc, v)
}

// HoldBudget holds what a batch of chain may cost (Estimate) against the budgets of key and
// of its team (nil: none), until until: the batch is refused (429 budget_exceeded) unless
// its whole estimate fits in what each has left, holds included. The holds outlive the
// request: the caller keeps them with the batch and releases them (ReleaseBudget) once its
// charges are in. None when neither has a budget.
func (p *Policy) HoldBudget(ctx context.Context, key *auth.Key, team *auth.Team, chain *fallback.Chain, req *llm.Request,
	bodyLen int, until time.Time) ([]usage.Hold, error) {
	if !p.Budgeted(key, team) {
		return nil, nil
	}
	amount := p.Estimate(chain, req, bodyLen)
	var held []usage.Hold
	for _, sc := range scopes(key, team) {
		if sc.budget == (usage.Budget{}) {
			continue
		}
		h := usage.NewHold(sc.log, sc.budget, amount, until)
		if len(held) > 0 {
			h.ID = held[0].ID // one batch, one ID: each budget's hold is told by its key
		}
		v, err := p.Budgets.Hold(ctx, h)
		if err != nil || !v.OK {
			p.ReleaseBudget(ctx, held)
			return nil, refusal(sc, v, err)
		}
		held = append(held, h)
	}
	return held, nil
}

// ReleaseBudget ends holds (HoldBudget's): what they keep weighs on the budgets no more.
func (p *Policy) ReleaseBudget(ctx context.Context, holds []usage.Hold) {
	if p.Budgets == nil {
		return
	}
	for _, h := range holds {
		_ = p.Budgets.Release(ctx, h)
	}
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

// Exceeded is the 429 of key's spent budget: not worth a retry before the period ends (the
// edge sends x-should-retry: false with every RateLimited error it answers).
func Exceeded(key *auth.Key, v usage.Verdict) error { return exceeded(keyScope(key), v) }

// exceeded is the 429 of sc's spent budget ("Key 'ci' has used…", "Team 'search' has
// used…").
func exceeded(sc scope, v usage.Verdict) error {
	capUSD, period := sc.daily, "day (UTC)"
	if v.Over == "monthly" {
		capUSD, period = sc.monthly, "month (UTC)"
	}
	who := "Key"
	if sc.what == "team" {
		who = "Team"
	}
	return &llm.Error{Kind: llm.RateLimited, Code: "budget_exceeded", Type: "insufficient_quota",
		Message: fmt.Sprintf("%s '%s' has used its budget of $%.2f for this %s ($%.4f spent or reserved). "+
			"It is available again when the %s ends.", who, sc.name, capUSD, period, usage.USD(v.Spent), period)}
}
