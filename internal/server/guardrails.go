package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/dialect/admin"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/guard"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// Guards are the configured guardrails (DESIGN §6), by name and by the alias they are
// attached to; keys attach theirs by name. The zero value has none.
type Guards struct {
	ByName  map[string]*guard.Guardrail
	ByAlias map[string][]*guard.Guardrail
}

// of is what a request on alias by key is judged by: the alias's guardrails, then the key's
// (each once). A name the configuration no longer has is skipped.
func (gs *Guards) of(alias string, key *auth.Key) guard.Set {
	out := guard.Set(gs.ByAlias[alias])
	if key == nil || len(key.Guardrails) == 0 {
		return out
	}
	out = append(guard.Set(nil), out...)
	for _, name := range key.Guardrails {
		g := gs.ByName[name]
		seen := g == nil
		for _, h := range out {
			seen = seen || h == g
		}
		if !seen {
			out = append(out, g)
		}
	}
	return out
}

// admit runs what must pass once a request is decoded and its chain known, before any
// provider is called: the input guardrails of the alias and the key (a masking one changes
// the prompt), then the key's budget. It readies the request's output guardrails.
func (s *Server) admit(c echo.Context, chain *fallback.Chain, req *llm.Request, bodyLen int) error {
	gs := s.o.Guards.of(chain.Alias, callerKey(c))
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

// keyGuardrails checks that the guardrails a key names through the admin API exist.
func (s *Server) keyGuardrails(k *auth.Key) error {
	for _, name := range k.Guardrails {
		if s.o.Guards.ByName[name] == nil {
			return admin.Bad("guardrails", "guardrails names '"+name+"', which is not a configured guardrail.")
		}
	}
	return nil
}
