package admin

import (
	"bytes"
	"encoding/json"
	"math"
	"path"

	"github.com/sluice-gw/sluice/internal/auth"
)

// A key's budget, guardrails and MCP access as the admin API shows and takes them (keys.go).

// Budget is a key's budget: USD per UTC day and month, 0 for no cap.
type Budget struct {
	DailyUSD   float64 `json:"daily_usd"`
	MonthlyUSD float64 `json:"monthly_usd"`
}

// BudgetInput is the budget of POST and PATCH: members present replace the key's.
type BudgetInput struct {
	DailyUSD   *float64 `json:"daily_usd"`
	MonthlyUSD *float64 `json:"monthly_usd"`
}

func keyExtras(k *auth.Key) (Budget, []string) {
	gs := k.Guardrails
	if gs == nil {
		gs = []string{}
	}
	return Budget{DailyUSD: k.DailyUSD, MonthlyUSD: k.MonthlyUSD}, gs
}

// maxBudgetUSD keeps a budget within the nano-USD counters (int64).
const maxBudgetUSD = 1e9

// applyExtras sets the budget and guardrails present in in on k, and checks them; that the
// guardrails exist is the edge's to check.
func (in *KeyInput) applyExtras(k *auth.Key) error {
	if err := in.Budget.apply(&k.DailyUSD, &k.MonthlyUSD); err != nil {
		return err
	}
	if err := in.applyMCP(k); err != nil {
		return err
	}
	if in.Guardrails != nil {
		if len(in.Guardrails) > 64 {
			return Bad("guardrails", "guardrails lists at most 64 names.")
		}
		k.Guardrails = in.Guardrails
	}
	return nil
}

// apply sets the members of b present on daily and monthly, and checks them; b nil: none.
func (b *BudgetInput) apply(daily, monthly *float64) error {
	if b == nil {
		return nil
	}
	for _, v := range []*float64{b.DailyUSD, b.MonthlyUSD} {
		if v != nil && (*v < 0 || *v > maxBudgetUSD || math.IsNaN(*v)) {
			return Bad("budget", "budget.daily_usd and budget.monthly_usd are USD from 0 (no cap) to 1e9.")
		}
	}
	if b.DailyUSD != nil {
		*daily = *b.DailyUSD
	}
	if b.MonthlyUSD != nil {
		*monthly = *b.MonthlyUSD
	}
	return nil
}

// applyMCP sets the key's access to the MCP gateway (/mcp) and its tool call limit. Server
// names are not checked against the configuration: a name it does not have grants nothing.
func (in *KeyInput) applyMCP(k *auth.Key) error {
	if v := in.ToolCallsPerMinute; v != nil {
		if *v < 0 {
			return Bad("tool_calls_per_minute", "tool_calls_per_minute must not be negative (0: unlimited).")
		}
		k.ToolCallsPerMinute = *v
	}
	return decodeMCP(in.MCP, &k.MCP)
}

// decodeMCP sets *dst from raw, a key's or team's "mcp" member: absent leaves it, null
// removes it.
func decodeMCP(raw json.RawMessage, dst **auth.MCPAccess) error {
	switch {
	case raw == nil:
		return nil
	case string(raw) == "null":
		*dst = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var m auth.MCPAccess
	if dec.Decode(&m) != nil {
		return Bad("mcp", `mcp is {"servers": [names], "tools": ["server__tool" patterns]} or null.`)
	}
	if len(m.Servers) > 64 || len(m.Tools) > 256 {
		return Bad("mcp", "mcp lists at most 64 servers and 256 tool patterns.")
	}
	for _, s := range m.Servers {
		if s == "" || len(s) > 256 {
			return Bad("mcp", "mcp.servers holds names of 1 to 256 bytes.")
		}
	}
	for _, p := range m.Tools {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return Bad("mcp", "mcp.tools holds server__tool names or patterns (path.Match): '"+p+"' is not one.")
		}
	}
	*dst = &m
	return nil
}
