package usage

import (
	"context"
	"slices"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Meter is the account of one request as it is served (DESIGN §6): the usage and cost of
// its rounds, and of attempts that failed after producing output, and the budget
// reservations it holds until Settle. The request's goroutine owns it.
type Meter struct {
	Prices *Prices   // nil: the built-in table
	Start  time.Time // the request's arrival: its day in the account
	Prompt int       // the prompt's estimated tokens, for usage a provider did not report
	Usage  llm.Usage // charged so far
	Cost   int64     // nano-USD charged so far
	Saved  int64     // nano-USD the provider's prompt cache saved so far (Saved)
	Target string    // the target charged last
	// Charged says some round was charged (its usage reported or estimated).
	Charged bool
	// Held are the budget reservations the request took; Settle replaces them with Cost.
	Held []Reservation
}

// Round accounts for one relay on target serving model: what the provider reported, else an
// estimate (a stream that ended without usage, or failed), marked as such. A relay that
// ended well has usage, reported or estimated by the relay; a failed one has it only if the
// report came before the failure. resp nil: nothing was relayed.
func (m *Meter) Round(target, model string, resp *llm.Response, err error) {
	if resp == nil {
		return
	}
	reported := err == nil || resp.Usage != (llm.Usage{})
	m.Charge(target, model, Of(resp, reported, m.Prompt))
}

// Charge adds u, used on target serving model, to the account.
func (m *Meter) Charge(target, model string, u llm.Usage) {
	p, _ := m.Prices.Lookup(target, model)
	m.charge(p, target, u)
}

// ChargeBatch adds u, a result of a batch on target serving model, to the account at the
// batch price (Price.Batched).
func (m *Meter) ChargeBatch(target, model string, u llm.Usage) {
	p, _ := m.Prices.Lookup(target, model)
	m.charge(p.Batched(), target, u)
}

// charge adds u, used on target at p, to the account.
func (m *Meter) charge(p Price, target string, u llm.Usage) {
	m.Cost += Cost(p, u)
	m.Saved += Saved(p, u)
	m.Usage = m.Usage.Plus(u)
	m.Target, m.Charged = target, true
}

// Settle replaces the request's reservations with its real cost: the first of each budget
// (a key's, its team's) takes the whole cost, the others nothing, so each budget's
// counters end holding exactly the cost; a reservation taken within a hold draws that cost
// from it. A failure is the budgets' to count and log.
func (m *Meter) Settle(ctx context.Context, b Budgets) {
	var charged []string // a request holds one or two budgets: no map
	for _, r := range m.Held {
		cost := int64(0)
		if !slices.Contains(charged, r.Key) {
			cost = m.Cost
			charged = append(charged, r.Key)
		}
		_ = b.Settle(ctx, r, cost)
		if r.Within != "" && cost > 0 {
			_ = b.Draw(ctx, Hold{ID: r.Within, Key: r.Key}, r.ID, cost)
		}
	}
}

// Outcome is how a request ended, as its line of the account says it.
type Outcome struct {
	Labels         // the key, the alias; Target is the served one, when no round was charged
	Failed   bool  // an error of the call (a client that left is not one)
	Attempts int   // the chain's attempts: a fallback when more than one
	Hit      bool  // answered from the response cache
	Saved    int64 // the tokens a hit did not spend
}

// Close ends the request's account: its budget reservations settle with the real cost
// (Settle; b nil: no budgets), and store records it as o on the day it arrived (store nil,
// or no alias, not a model call: not recorded). A store's failure is its to count and log.
// ctx must outlive the client: the accounting still happens when it left.
func (m *Meter) Close(ctx context.Context, b Budgets, store Store, o Outcome) {
	if b != nil {
		m.Settle(ctx, b)
	}
	if store == nil || o.Alias == "" {
		return
	}
	n := m.Counts(o.Failed, o.Attempts)
	if o.Hit {
		n.CacheHits, n.SavedTokens = 1, o.Saved
	}
	if m.Target != "" {
		o.Target = m.Target
	}
	_ = store.Add(ctx, Day(m.Start), o.Labels, n)
}

// Counts are the request's counts in the account: one request, its tokens and cost; an
// error unless it failed is false; a fallback when more than one target was tried.
func (m *Meter) Counts(failed bool, attempts int) Counts {
	n := Counts{Requests: 1, InputTokens: int64(m.Usage.PromptTokens), OutputTokens: int64(m.Usage.CompletionTokens),
		CachedTokens: int64(m.Usage.CachedTokens), CostNano: m.Cost, CacheWriteTokens: int64(m.Usage.CacheWriteTokens),
		CacheWrite1hTokens: int64(m.Usage.CacheWrite1hTokens), SavedNano: m.Saved}
	if failed {
		n.Errors = 1
	}
	if attempts > 1 {
		n.Fallbacks = 1
	}
	if m.Usage.Estimated {
		n.Estimated = 1
	}
	return n
}
