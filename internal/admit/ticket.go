package admit

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/guard"
	"github.com/sluice-gw/sluice/internal/limit"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/telemetry"
	"github.com/sluice-gw/sluice/internal/usage"
)

// Ask is a decoded model request as admission sees it.
type Ask struct {
	Model string
	Req   *llm.Request
	// Chain is the chain the model resolved to; nil: no round follows (a token count), so
	// only the key's model access and rate limits apply.
	Chain   *fallback.Chain
	BodyLen int
	// Embeddings: no answer tokens are estimated and no guardrail screens the input.
	Embeddings bool
}

// Ticket is one model request from its admission to its settlement: what it holds of its
// key's rate limits and budget, the meter of what it cost, and the guardrails it is judged
// by. Every model request gets one, admitted or not, so that Settle accounts a refused one
// too. The request's goroutine owns it; a frontend run that outlives the handler gets
// copies of what it needs.
type Ticket struct {
	usage.Meter
	// Req is the admitted request and Guards its guardrails (the alias's and the key's):
	// set once the input guardrails passed, nil before.
	Req    *llm.Request
	Guards guard.Set
	// Limits is the rate limiter's verdict, for the x-ratelimit-* headers (zero: no limits).
	Limits limit.Result

	p    *Policy
	key  *auth.Key
	team *auth.Team // the key's team, once Admit found it; nil: none
	held *Held
}

// Ticket starts the admission of a request by key (nil: auth off) that arrived at start.
func (p *Policy) Ticket(key *auth.Key, start time.Time) *Ticket {
	return &Ticket{Meter: usage.Meter{Prices: p.Prices, Start: start}, p: p, key: key}
}

// Key is the ticket's key; nil with auth off.
func (t *Ticket) Key() *auth.Key { return t.key }

// Team is the team of the ticket's key, once admitted; nil: none.
func (t *Ticket) Team() *auth.Team { return t.team }

// Admit is the one admission of a decoded request, in order: the key and its team (issue
// 37) may use the model (403 model_not_allowed); the team's rate limits, then the key's,
// give a request and the request's estimated tokens (429; Limits says the verdict, refused
// or not); then, for a request a round follows, the input guardrails of the alias and the
// key (400 guardrail_blocked; a masking one changes the prompt) and the team's and the
// key's budgets for the round's estimated cost (429 budget_exceeded). A refusal of the
// first two is the gate's (Gated).
func (t *Ticket) Admit(ctx context.Context, a Ask) error {
	if t.key != nil {
		team, err := t.p.TeamOf(ctx, t.key)
		if err != nil {
			return gated{err}
		}
		t.team = team
		if !t.key.Allows(a.Model) {
			return gated{NotAllowed(a.Model)}
		}
		if team != nil && !team.Allows(a.Model) {
			return gated{TeamNotAllowed(team, a.Model)}
		}
		var maxTokens, n int64
		if a.Req != nil && a.Chain != nil { // a count's max_tokens is not an answer's
			maxTokens, n = int64(outTokens(a.Req)), int64(a.Req.N)
		}
		tpm := t.key.TPM
		if team != nil && team.TPM > 0 && (tpm <= 0 || team.TPM < tpm) {
			tpm = team.TPM // the default answer is capped at the smaller limit (Cost)
		}
		h, res, err := t.p.Reserve(ctx, t.key, team, Cost(a.BodyLen, maxTokens, n, a.Embeddings, tpm))
		t.Limits = res
		if err != nil {
			return gated{err}
		}
		t.held = h
	}
	if a.Chain == nil {
		return nil
	}
	var req *llm.Request
	if !a.Embeddings {
		req = a.Req
		var named []string
		if t.key != nil {
			named = t.key.Guardrails
		}
		t.Req, t.Prompt, t.Guards = req, usage.PromptTokens(req), t.p.Guards.Of(a.Chain.Alias, named)
		if r := t.Guards.Input(ctx, req); r != nil {
			return &llm.Error{Kind: llm.Refused, Status: http.StatusBadRequest, Code: "guardrail_blocked",
				Type: "invalid_request_error", Message: "The request was blocked by " + r.Error() + "."}
		}
	}
	return t.ReserveBudget(ctx, a.Chain, req, a.BodyLen)
}

// ReserveBudget reserves the estimated cost of a round of chain against the budgets of
// the key and its team (Policy.ReserveBudget), settled with the real cost by Settle. req
// is nil for embeddings.
func (t *Ticket) ReserveBudget(ctx context.Context, chain *fallback.Chain, req *llm.Request, bodyLen int) error {
	rs, err := t.p.ReserveBudget(ctx, t.key, t.team, chain, req, bodyLen, t.Start)
	t.Held = append(t.Held, rs...)
	return err
}

// HoldBudget holds the estimated cost of a batch of chain, until until, against the
// budgets of the key and its team (Policy.HoldBudget): the holds outlive the ticket, which
// does not settle them. req is nil for a batch whose input is estimated from its bytes.
func (t *Ticket) HoldBudget(ctx context.Context, chain *fallback.Chain, req *llm.Request, bodyLen int, until time.Time) ([]usage.Hold, error) {
	return t.p.HoldBudget(ctx, t.key, t.team, chain, req, bodyLen, until)
}

// ReleaseBudget ends holds a ticket took (Policy.ReleaseBudget).
func (t *Ticket) ReleaseBudget(ctx context.Context, holds []usage.Hold) {
	t.p.ReleaseBudget(ctx, holds)
}

// outTokens is the answer's max tokens a request asks for (0: not given).
func outTokens(r *llm.Request) int {
	switch {
	case r.MaxCompletionTokens != nil && *r.MaxCompletionTokens > 0:
		return *r.MaxCompletionTokens
	case r.MaxTokens != nil:
		return *r.MaxTokens
	}
	return 0
}

// Settle ends the ticket of the request whose access record is in, answered with status,
// however it ended (the client may have left: the accounting still happens). The token
// reservation gets what the call used: the usage the handler recorded; nothing for an
// error answered before any output, the upstream charged none; the estimate stands when
// the usage is unknown. The budget reservations get the real cost, and the account the
// request; the access record gets the cost, for the access line and the server span.
func (t *Ticket) Settle(ctx context.Context, in *telemetry.Access, status int) {
	if !t.Charged && in.Usage != nil && in.Target != "" {
		// A handler that reports usage without metered rounds (a frontend run).
		_, model, _ := strings.Cut(in.Target, "/")
		t.Charge(in.Target, model, llm.Usage{PromptTokens: in.Usage.Prompt, CompletionTokens: in.Usage.Completion,
			TotalTokens: in.Usage.Total, Estimated: in.Usage.Estimated, CachedTokens: in.Usage.Cached,
			CacheWriteTokens: in.Usage.CacheWrite, CacheWrite1hTokens: in.Usage.CacheWrite1h})
	}
	in.CostUSD = usage.USD(t.Cost)
	in.SavedUSD = usage.USD(t.Saved) // issue 46: the request log shows it
	used := int64(-1)
	switch {
	case in.Usage != nil:
		if used = int64(in.Usage.Total); used == 0 {
			used = int64(in.Usage.Prompt + in.Usage.Completion)
		}
	case status >= 400:
		used = 0
	}
	o := usage.Outcome{Labels: usage.Labels{Alias: in.Model, Target: in.Target}, Attempts: in.Attempts,
		Failed: in.Kind != llm.KindNone && in.Kind != llm.Canceled || // the client left: not an error of the call
			in.Kind == llm.KindNone && status >= 400}
	if in.Cached() && in.Response != nil {
		o.Hit, o.Saved = true, int64(in.Response.Usage.TotalTokens)
	}
	if t.held != nil && used >= 0 {
		t.p.Reconcile(ctx, t.held, used)
	}
	if t.key != nil {
		o.Key, o.Team = t.key.ID, t.key.Team
	}
	t.Close(ctx, t.p.Budgets, t.p.Store, o)
}

// Rounds is the checker of the later rounds of the ticket's frontend run (Policy.Rounds).
func (t *Ticket) Rounds() *Rounds { return t.p.Rounds(t.key, t.team, t.Held) }

// gated is a refusal of the key's model access or rate limits: the client's SDK may retry it
// as its policy says (it honours Retry-After), unlike a failure of the chain.
type gated struct{ error }

func (g gated) Unwrap() error { return g.error }

// Gated reports whether err is a refusal of the key's model access or rate limits.
func Gated(err error) bool {
	var g gated
	return errors.As(err, &g)
}

// TeamOf is the team of key: nil when it has none. A team that does not exist (deleted
// while a key still named it) refuses the key's requests rather than let them pass
// unchecked (403); a store that cannot answer is Unavailable.
func (p *Policy) TeamOf(ctx context.Context, key *auth.Key) (*auth.Team, error) {
	if key == nil || key.Team == "" {
		return nil, nil
	}
	var team *auth.Team
	err := auth.ErrNoTeam
	if p.Teams != nil {
		team, err = p.Teams.Lookup(ctx, key.Team)
	}
	switch {
	case errors.Is(err, auth.ErrNoTeam):
		return nil, &llm.Error{Kind: llm.Invalid, Status: http.StatusForbidden, Code: "team_not_found", Type: "invalid_request_error",
			Message: "The API key belongs to team '" + key.Team + "', which does not exist."}
	case err != nil:
		return nil, Unavailable()
	}
	return team, nil
}

// TeamNotAllowed is the 403 of a key whose team may not use model.
func TeamNotAllowed(team *auth.Team, model string) error {
	return &llm.Error{Kind: llm.Invalid, Status: http.StatusForbidden, Param: "model", Code: "model_not_allowed",
		Type: "invalid_request_error", Message: "The team '" + team.Name + "' of this API key is not allowed to use the model '" + model + "'."}
}
