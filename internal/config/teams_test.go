package config

import (
	"strings"
	"testing"
)

func TestTeams(t *testing.T) {
	c := mustParse(t, providers+`models:
  default: [sim/echo]
  "claude-*": [sim/echo]
teams:
  - {name: search, models: [default, "claude-*"], limits: {rpm: 600, tpm: 1000000}, budget: {daily_usd: 50, monthly_usd: 1000}}
  - {name: infra}
keys:
  - {name: search-bot, hash: "`+hashA+`", team: search}
  - {name: loner, hash: "`+strings.Replace(hashA, "a3", "b3", 1)+`"}
`, env())
	s, infra := c.Teams[0], c.Teams[1]
	if s.Name != "search" || len(s.Models) != 2 || s.Limits.RPM != 600 || s.Limits.TPM != 1_000_000 ||
		s.Budget.DailyUSD != 50 || s.Budget.MonthlyUSD != 1000 {
		t.Errorf("got %+v, want the search team as written", s)
	}
	if len(infra.Models) != 1 || infra.Models[0] != "*" {
		t.Errorf("got models %q, want [*] when absent", infra.Models)
	}
	if c.Keys[0].Team != "search" || c.Keys[1].Team != "" {
		t.Errorf("got teams %q and %q, want search and none", c.Keys[0].Team, c.Keys[1].Team)
	}
}

func TestTeamValidation(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"unknown team", "teams: [{name: search}]\nkeys: [{name: a, hash: " + hashA + ", team: serch}]\n",
			`keys[0].team: unknown team "serch" (a name in teams:)`},
		{"no teams", "keys: [{name: a, hash: " + hashA + ", team: search}]\n", `keys[0].team: unknown team "search"`},
		{"duplicate", "teams: [{name: search}, {name: search}]\n", `teams[1].name: team "search" is listed twice`},
		{"empty name", "teams: [{models: ['*']}]\n", "teams[0].name: want 1 to 64 of a-z"},
		{"bad name", "teams: [{name: 'Search Team'}]\n", "teams[0].name: want 1 to 64 of a-z"},
		{"unknown model", "teams: [{name: s, models: [nope]}]\n", `teams[0].models[0]: unknown model alias "nope"`},
		{"negative rpm", "teams: [{name: s, limits: {rpm: -1}}]\n", "teams[0].limits.rpm: must not be negative"},
		{"negative budget", "teams: [{name: s, budget: {daily_usd: -5}}]\n", "teams[0].budget: must not be negative"},
		{"mcp server", "teams: [{name: s, mcp: {servers: [docs]}}]\n", `teams[0].mcp.servers[0]: unknown MCP server "docs"`},
		{"unknown field", "teams: [{name: s, limits: {tool_calls_per_minute: 3}}]\n", "tool_calls_per_minute"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkErr(t, tt.src, tt.want) })
	}
}
