package server

import (
	"context"
	"log/slog"
	"slices"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/redact"
	"github.com/sluice-gw/sluice/internal/runs"
	"github.com/sluice-gw/sluice/internal/tools"
)

// ServerTools are the server-side tools of frontend runs (DESIGN §8, package tools): the
// configured tools and which aliases offer which.
type ServerTools struct {
	// Set runs the tools; nil: none configured. Server.Close closes it.
	Set *tools.Set
	// Offers lists, per alias, the tools (names in the config's tools:) it offers the model.
	Offers map[string][]string
}

// toolsFromConfig builds the tools: block, their outputs and progress passing rules.
func toolsFromConfig(c *config.Config, rules *redact.Rules, log *slog.Logger) ServerTools {
	st := ServerTools{Offers: map[string][]string{}}
	if len(c.Tools) == 0 {
		return st
	}
	var specs []tools.Spec
	for _, name := range sortedNames(c.Tools) {
		t, sp := c.Tools[name], tools.Spec{Name: name}
		switch {
		case t.HTTP != nil:
			sp.HTTP = &tools.HTTP{URL: t.HTTP.URL, Headers: t.HTTP.Headers, Timeout: t.HTTP.Timeout.Std(),
				Liveness: t.HTTP.Liveness.Std(), Description: t.HTTP.Description, Parameters: t.HTTP.Parameters}
		case t.MCP != nil:
			m := t.MCP
			sp.MCP = &tools.MCP{URL: m.URL, Headers: m.Headers, Command: m.Command, Args: m.Args, Env: m.Env, Dir: m.Cwd,
				Timeout: m.Timeout.Std(), Liveness: m.Liveness.Std()}
			if m.Tools != nil {
				sp.MCP.Allow, sp.MCP.Deny = m.Tools.Allow, m.Tools.Deny
			}
		case t.Sim != nil:
			sp.Sim = &tools.Sim{Steps: t.Sim.Steps, Interval: t.Sim.Interval.Std(), Fail: t.Sim.Fail,
				Description: t.Sim.Description, Parameters: t.Sim.Parameters}
		}
		specs = append(specs, sp)
	}
	st.Set = tools.New(specs, tools.Options{RedactJSON: rules.RedactJSON, RedactText: rules.Redact, Log: log})
	for alias, a := range c.Models {
		if len(a.Tools) > 0 {
			st.Offers[alias] = a.Tools
		}
	}
	return st
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// offerTools adds the alias's server-side tools to a run's request and returns what runs
// them (nil: the alias offers none, and every call goes to the client). A client that
// declares a tool of the same name is refused: its calls could not be told apart.
func (s *Server) offerTools(ctx context.Context, alias string, req *llm.Request) (runs.Tools, error) {
	st := s.o.UI.Tools
	if st.Set == nil || len(st.Offers[alias]) == 0 {
		return nil, nil
	}
	o := st.Set.Offer(ctx, st.Offers[alias], s.o.Policies[alias].RedactInput)
	if len(o.Tools()) == 0 {
		return nil, nil // an MCP server that is down offers nothing meanwhile
	}
	for i, t := range req.Tools {
		if o.Owns(t.Name) {
			return nil, invalid("tools", "Invalid 'tools[%d]': '%s' is a server-side tool of model '%s'; the client cannot declare it.", i, t.Name, alias)
		}
	}
	req.Tools = append(slices.Clip(req.Tools), o.Tools()...)
	req.KeepReasoning = true // the tool rounds hand the round's reasoning back (DESIGN §8)
	return o, nil
}
