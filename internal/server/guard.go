package server

import (
	"context"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/guard"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/runs"
	"github.com/sluice-gw/sluice/internal/telemetry"
	"github.com/sluice-gw/sluice/internal/usage"
)

// Guards are the configured guardrails (DESIGN §6), by name and by the alias they are
// attached to; keys attach theirs by name. The zero value has none.
type Guards struct {
	ByName  map[string]*guard.Guardrail
	ByAlias map[string][]*guard.Guardrail
}

// guardrails is what one request is judged by.
type guardrails []*guard.Guardrail

// of is what a request on alias by key is judged by: the alias's guardrails, then the key's
// (each once). A name the configuration no longer has is skipped.
func (gs *Guards) of(alias string, key *auth.Key) guardrails {
	out := guardrails(gs.ByAlias[alias])
	if key == nil || len(key.Guardrails) == 0 {
		return out
	}
	out = append(guardrails(nil), out...)
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

// observe reports a check's verdict to telemetry: the refusing guardrail's block (or retry),
// else a pass for each guardrail of the stage that ran.
func (gs guardrails) observe(ctx context.Context, stage string, r *guard.Refusal) {
	if r != nil {
		v := telemetry.VerdictBlock
		if r.Retry {
			v = telemetry.VerdictRetry
		}
		telemetry.Guardrail(ctx, r.Guardrail, v)
		return
	}
	for _, g := range gs {
		if g.Stage == stage {
			telemetry.Guardrail(ctx, g.Name, telemetry.VerdictPass)
		}
	}
}

// holds reports whether an output guardrail of gs holds the round until its verdict.
func (gs guardrails) holds() bool {
	for _, g := range gs {
		if g.Hold {
			return true
		}
	}
	return false
}

// admit runs what must pass once a request is decoded and its chain known, before any
// provider is called: the input guardrails of the alias and the key (a masking one changes
// the prompt), then the key's budget. It readies the request's output guardrails.
func (s *Server) admit(c echo.Context, chain *fallback.Chain, req *llm.Request, bodyLen int) error {
	gs := s.o.Guards.of(chain.Alias, callerKey(c))
	if m := meterOf(c); m != nil {
		m.req, m.prompt, m.guards = req, usage.PromptTokens(req), gs
	}
	r := guard.CheckInput(gs, req)
	gs.observe(c.Request().Context(), "input", r)
	if r != nil {
		return &llm.Error{Kind: llm.Refused, Status: http.StatusBadRequest, Code: "guardrail_blocked",
			Type: "invalid_request_error", Message: "The request was blocked by " + r.Error() + "."}
	}
	return s.reserveBudget(c, chain, req, bodyLen)
}

// screen runs the request's output guardrails on the complete response of a round. A
// refusal is 422 guardrail_refused before the first byte, the in-band error after it; either
// way x-should-retry: false (writeError sets it for Refused). action: retry refuses alike
// here: only frontend runs restart (runScreen).
func (s *Server) screen(c echo.Context, resp *llm.Response) error {
	m := meterOf(c)
	if m == nil || len(m.guards) == 0 {
		return nil
	}
	r := guard.CheckOutput(m.guards, m.req, resp)
	m.guards.observe(c.Request().Context(), "output", r)
	if r != nil {
		return refusedAnswer(r)
	}
	return nil
}

func refusedAnswer(r *guard.Refusal) error {
	return &llm.Error{Kind: llm.Refused, Code: "guardrail_refused", Type: "invalid_request_error",
		Message: "The answer was refused by " + r.Error() + "."}
}

// runScreen is the output guardrails of a frontend run's rounds, for runs.Spec.Screen (nil
// when the request has none): a refusal by a guardrail whose action is retry wraps
// runs.ErrRetry, so the run restarts the round on the next target. It holds the request's
// guardrails and decoded request, not the echo context: the run outlives the handler.
func (s *Server) runScreen(c echo.Context) func(context.Context, *llm.Response) error {
	m := meterOf(c)
	if m == nil || len(m.guards) == 0 {
		return nil
	}
	gs, req := m.guards, m.req
	return func(ctx context.Context, resp *llm.Response) error {
		r := guard.CheckOutput(gs, req, resp)
		gs.observe(ctx, "output", r)
		switch {
		case r == nil:
			return nil
		case r.Retry:
			return fmt.Errorf("%w: %w", runs.ErrRetry, refusedAnswer(r))
		}
		return refusedAnswer(r)
	}
}

// holding reports whether the request's round must be held until the output verdict.
func holding(c echo.Context) bool {
	m := meterOf(c)
	return m != nil && m.guards.holds()
}

// keyGuardrails checks that the guardrails a key names through the admin API exist.
func (s *Server) keyGuardrails(k *auth.Key) error {
	for _, name := range k.Guardrails {
		if s.o.Guards.ByName[name] == nil {
			return badKey("guardrails", "guardrails names '"+name+"', which is not a configured guardrail.")
		}
	}
	return nil
}
