package server

import (
	"context"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/admit"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
)

// reserve takes one request and cost tokens from key's limits (admit.Policy.Reserve), and
// sets the x-ratelimit-* headers OpenAI clients read, on refusals and answers alike. nil
// without limits.
func (s *Server) reserve(c echo.Context, key *auth.Key, cost int64) (*admit.Held, error) {
	held, res, err := s.adm.Reserve(c.Request().Context(), key, cost)
	h := c.Response().Header()
	oai.RateLimit(h, "requests", res.Requests.Limit, res.Requests.Remaining, res.Requests.Reset)
	oai.RateLimit(h, "tokens", res.Tokens.Limit, res.Tokens.Remaining, res.Tokens.Reset)
	if res.Never {
		h.Set("X-Should-Retry", "false") // waiting cannot help, whatever the SDK's policy for 429
	}
	return held, err
}

// reconcile corrects the token reservation with what the call used: the usage the handler
// recorded; nothing for an error answered before any output (the upstream charged none);
// and when a handler served without knowing the usage, the estimate stands.
func (s *Server) reconcile(c echo.Context, key *auth.Key, h *admit.Held) {
	var used int64
	switch in := reqInfo(c); {
	case h == nil:
		return
	case in.Usage != nil:
		used = int64(in.Usage.Total)
		if used == 0 {
			used = int64(in.Usage.Prompt + in.Usage.Completion)
		}
	case c.Response().Status >= 400:
	default:
		return
	}
	// The client may have left: the accounting still happens.
	s.adm.Reconcile(context.WithoutCancel(c.Request().Context()), key, h, used)
}

// reserveBudget reserves the estimated cost of a round against the key's budget
// (admit.Policy.ReserveBudget), settled with the real cost once the handler is done
// (account). A route that runs several rounds calls it before each. bodyLen is the size of
// the request body; req is nil for embeddings.
func (s *Server) reserveBudget(c echo.Context, chain *fallback.Chain, req *llm.Request, bodyLen int) error {
	m := meterOf(c)
	if m == nil {
		return nil
	}
	r, ok, err := s.adm.ReserveBudget(c.Request().Context(), callerKey(c), chain, req, bodyLen, m.Start)
	if ok {
		m.Held = append(m.Held, r)
	}
	return err
}
