package guard

import (
	"context"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// Set is what one request is judged by: the guardrails of its alias, then its key's. Its
// checks report each verdict to telemetry. The zero value judges nothing.
type Set []*Guardrail

// Input runs the input guardrails on req (a masking one changes it) and returns the first
// refusal.
func (s Set) Input(ctx context.Context, req *llm.Request) *Refusal {
	r := CheckInput(s, req)
	s.observe(ctx, Input, r)
	return r
}

// Output runs the output guardrails on the complete response of a round of req and returns
// the first refusal.
func (s Set) Output(ctx context.Context, req *llm.Request, resp *llm.Response) *Refusal {
	if len(s) == 0 {
		return nil
	}
	r := CheckOutput(s, req, resp)
	s.observe(ctx, Output, r)
	return r
}

// Holds reports whether an output guardrail of s holds the round until its verdict (mode
// hold, DESIGN §6).
func (s Set) Holds() bool {
	for _, g := range s {
		if g.Hold {
			return true
		}
	}
	return false
}

// observe reports a check's verdict: the refusing guardrail's block (or retry), else a pass
// for each guardrail of the stage that ran.
func (s Set) observe(ctx context.Context, stage string, r *Refusal) {
	if r != nil {
		v := telemetry.VerdictBlock
		if r.Retry {
			v = telemetry.VerdictRetry
		}
		telemetry.Guardrail(ctx, r.Guardrail, stage, v)
		return
	}
	for _, g := range s {
		if g.Stage == stage {
			telemetry.Guardrail(ctx, g.Name, stage, telemetry.VerdictPass)
		}
	}
}

// Catalog is the configured guardrails (DESIGN §6), by name and by the alias they are
// attached to; keys attach theirs by name. The zero value has none. Read-only once built.
type Catalog struct {
	ByName  map[string]*Guardrail
	ByAlias map[string][]*Guardrail
}

// Of is what a request on alias by a key that names the guardrails keyed is judged by: the
// alias's guardrails, then the key's (each once). A name the configuration no longer has is
// skipped.
func (gc *Catalog) Of(alias string, keyed []string) Set {
	out := Set(gc.ByAlias[alias])
	if len(keyed) == 0 {
		return out
	}
	out = append(Set(nil), out...)
	for _, name := range keyed {
		g := gc.ByName[name]
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
