package gateway

import (
	"log/slog"
	"maps"
	"slices"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/mcpgw"
	"github.com/sluice-gw/sluice/internal/redact"
	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/tools"
)

// mcpFromConfig is the MCP gateway at /mcp over the MCP servers of the tools: block (nil when
// there is none), its sessions in Redis when the gate has it.
func mcpFromConfig(c *config.Config, set *tools.Set, rules *redact.Rules, rs *redisstore.Store, log *slog.Logger) *mcpgw.Gateway {
	if set == nil || len(set.MCPServers()) == 0 {
		return nil
	}
	o := mcpgw.Options{Servers: set, RedactJSON: rules.RedactJSON, RedactText: rules.Redact,
		Heartbeat: c.HeartbeatInterval.Std(), MaxBody: c.Limits.MaxBodyBytes, BodyTimeout: c.Limits.BodyTimeout.Std(), Origins: c.CORS.AllowedOrigins, Log: log}
	if rs != nil {
		o.Store, o.Bus = rs.MCPSessions(), rs.MCPCancels()
	}
	return mcpgw.New(o)
}

// toolsFromConfig builds the tools: block, their outputs and progress passing rules.
func toolsFromConfig(c *config.Config, rules *redact.Rules, log *slog.Logger) tools.Menu {
	st := tools.Menu{Offers: map[string][]string{}}
	if len(c.Tools) == 0 {
		return st
	}
	var specs []tools.Spec
	for _, name := range slices.Sorted(maps.Keys(c.Tools)) {
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
