package server

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// reserveBudget reserves the estimated cost of a round against the key's budget, before any
// provider is called; a key whose day or month is spent gets 429 budget_exceeded. The
// reservation is settled with the real cost once the handler is done (account), the same
// reserve-and-reconcile as the gate's token limits. A route that runs several rounds calls
// it before each. bodyLen is the size of the request body; req is nil for embeddings.
func (s *Server) reserveBudget(c echo.Context, chain *fallback.Chain, req *llm.Request, bodyLen int) error {
	b, key, m := s.o.Usage.Budgets, callerKey(c), meterOf(c)
	if b == nil || key == nil || m == nil || (key.DailyUSD <= 0 && key.MonthlyUSD <= 0) {
		return nil
	}
	est := s.estimateCost(chain, req, bodyLen)
	r := usage.NewReservation(key.ID, usage.Budget{Daily: usage.Nano(key.DailyUSD), Monthly: usage.Nano(key.MonthlyUSD)}, est, m.Start)
	v, err := b.Reserve(c.Request().Context(), r)
	if err != nil {
		return &llm.Error{Kind: llm.Unavailable, Status: http.StatusServiceUnavailable, Code: "redis_unavailable",
			Type: "server_error", Message: "The gateway cannot reach its shared state (Redis) to check the key's budget, " +
				"and is configured to refuse requests meanwhile (redis.on_failure: closed). Retry shortly."}
	}
	if !v.OK {
		return budgetExceeded(key, v)
	}
	m.Held = append(m.Held, r)
	return nil
}

// estimateCost is what a round may cost: the prompt at about four bytes a token of the body
// (its JSON included, so it errs high), and the answer's max_tokens (512 when unset) for
// each of n choices, at the price of the most expensive target of the chain, since a
// fallback may land on any of them.
func (s *Server) estimateCost(chain *fallback.Chain, req *llm.Request, bodyLen int) int64 {
	u := llm.Usage{PromptTokens: (bodyLen + 3) / 4}
	if req != nil {
		out := defaultOutputTokens
		switch {
		case req.MaxCompletionTokens != nil:
			out = *req.MaxCompletionTokens
		case req.MaxTokens != nil:
			out = *req.MaxTokens
		}
		u.CompletionTokens = out * min(max(req.N, 1), 128)
	}
	var most int64
	visit := func(t fallback.Target) {
		p, _ := s.o.Usage.Prices.Lookup(t.Name, t.Model)
		most = max(most, usage.Cost(p, u))
	}
	for _, el := range chain.Elements {
		for _, t := range el.Targets {
			visit(t)
		}
	}
	for _, t := range chain.Targets {
		visit(t)
	}
	return most
}

// budgetExceeded is the 429 of a spent budget: not worth a retry before the period ends,
// hence x-should-retry: false (writeError sets it for every RateLimited error it answers).
func budgetExceeded(key *auth.Key, v usage.Verdict) error {
	capUSD, period := key.DailyUSD, "day (UTC)"
	if v.Over == "monthly" {
		capUSD, period = key.MonthlyUSD, "month (UTC)"
	}
	return &llm.Error{Kind: llm.RateLimited, Code: "budget_exceeded", Type: "insufficient_quota",
		Message: fmt.Sprintf("Key '%s' has used its budget of $%.2f for this %s ($%.4f spent or reserved). "+
			"It is available again when the %s ends.", key.Name, capUSD, period, usage.USD(v.Spent), period)}
}
