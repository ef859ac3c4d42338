package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/guard"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// guardsOf is what a request on alias by key is judged by (guard.Catalog.Of).
func (s *Server) guardsOf(alias string, key *auth.Key) guard.Set {
	if key == nil {
		return s.o.Guards.Of(alias, nil)
	}
	return s.o.Guards.Of(alias, key.Guardrails)
}

// admit runs what must pass once a request is decoded and its chain known, before any
// provider is called: the input guardrails of the alias and the key (a masking one changes
// the prompt), then the key's budget. It readies the request's output guardrails.
func (s *Server) admit(c echo.Context, chain *fallback.Chain, req *llm.Request, bodyLen int) error {
	gs := s.guardsOf(chain.Alias, callerKey(c))
	if m := meterOf(c); m != nil {
		m.req, m.Prompt, m.guards = req, usage.PromptTokens(req), gs
	}
	if r := gs.Input(c.Request().Context(), req); r != nil {
		return &llm.Error{Kind: llm.Refused, Status: http.StatusBadRequest, Code: "guardrail_blocked",
			Type: "invalid_request_error", Message: "The request was blocked by " + r.Error() + "."}
	}
	return s.reserveBudget(c, chain, req, bodyLen)
}

// holding reports whether the request's round must be held until the output verdict.
func holding(c echo.Context) bool {
	m := meterOf(c)
	return m != nil && m.guards.Holds()
}
