package mcpgw

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/limit"
)

// TestKeyCaller: a key's caller counts each call against its rpm and its
// tool_calls_per_minute, and carries its MCP access.
func TestKeyCaller(t *testing.T) {
	ctx := t.Context()
	key := &auth.Key{ID: "k", Name: "agent", RPM: 5, ToolCallsPerMinute: 2, MCP: &auth.MCPAccess{Servers: []string{"docs"}}}
	c := KeyCaller(key, nil, nil, &limit.Memory{}, time.Minute)
	if c.Key != "k" || c.All || len(c.Servers) != 1 || c.Check != nil {
		t.Fatalf("caller %+v", c)
	}
	for i := range 2 {
		if err := c.Admit(ctx); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	var r *Refusal
	if err := c.Admit(ctx); !errors.As(err, &r) || !r.Limited || !strings.Contains(r.Message, "on tool calls per 1m0s: limit 2") {
		t.Fatalf("third call: %v", err)
	}
	if KeyCaller(key, nil, nil, nil, time.Minute).Admit != nil {
		t.Error("no limiter, but an Admit")
	}
}

// TestKeyCallerTeam: a key's team narrows what the key may use (both must allow a tool) and
// its rpm counts every tool call of its keys, before the key's own limits.
func TestKeyCallerTeam(t *testing.T) {
	key := &auth.Key{ID: "k", Name: "agent", MCP: &auth.MCPAccess{Servers: []string{"*"}}}
	for _, c := range []struct {
		name         string
		team         *auth.Team
		server, tool string
		want         bool
	}{
		{"no team", nil, "calc", "calc__add", true},
		{"a team without mcp restricts nothing", &auth.Team{Name: "t"}, "calc", "calc__add", true},
		{"the team's server", &auth.Team{Name: "t", MCP: &auth.MCPAccess{Servers: []string{"calc"}}}, "calc", "calc__add", true},
		{"another server than the team's", &auth.Team{Name: "t", MCP: &auth.MCPAccess{Servers: []string{"calc"}}}, "docs", "docs__search", false},
		{"a tool the team's patterns miss", &auth.Team{Name: "t", MCP: &auth.MCPAccess{Tools: []string{"calc__sub*"}}}, "calc", "calc__add", false},
		{"an empty mcp block: nothing", &auth.Team{Name: "t", MCP: &auth.MCPAccess{}}, "calc", "calc__add", false},
	} {
		cl := KeyCaller(key, c.team, nil, nil, time.Minute)
		if got := cl.allows(c.server, c.tool); got != c.want {
			t.Errorf("%s: allows(%s, %s) got %v, want %v", c.name, c.server, c.tool, got, c.want)
		}
	}
	// The key allows only calc, the team everything: the key's rule still holds.
	narrow := &auth.Key{ID: "k2", Name: "narrow", MCP: &auth.MCPAccess{Servers: []string{"calc"}}}
	if nc := KeyCaller(narrow, &auth.Team{Name: "t", MCP: &auth.MCPAccess{Servers: []string{"*"}}}, nil, nil, time.Minute); nc.allows("docs", "docs__search") {
		t.Error("the team's access widened the key's")
	}

	lim := &limit.Memory{}
	team := &auth.Team{Name: "search", RPM: 2}
	a := KeyCaller(key, team, nil, lim, time.Minute)
	b := KeyCaller(&auth.Key{ID: "k3", Name: "other", MCP: key.MCP}, team, nil, lim, time.Minute)
	for i, c := range []Caller{a, b} {
		if err := c.Admit(t.Context()); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	var r *Refusal
	if err := a.Admit(t.Context()); !errors.As(err, &r) || !strings.Contains(r.Message, "team 'search' on requests per 1m0s: limit 2") {
		t.Fatalf("third call of the team's keys: got %v, want the team's rpm", err)
	}
}

// TestAdmitReleases: a call one limit refuses holds nothing of the limits before it: a key
// at its tool_calls_per_minute does not use up its team's rpm (nor its own) with the calls
// it was refused, as admission releases a model request's team reservation.
func TestAdmitReleases(t *testing.T) {
	lim := &limit.Memory{}
	team := &auth.Team{Name: "search", RPM: 3}
	busy := KeyCaller(&auth.Key{ID: "k", Name: "busy", RPM: 10, ToolCallsPerMinute: 1}, team, nil, lim, time.Minute)
	other := KeyCaller(&auth.Key{ID: "k2", Name: "other"}, team, nil, lim, time.Minute)
	if err := busy.Admit(t.Context()); err != nil {
		t.Fatal(err)
	}
	var r *Refusal
	for range 3 {
		if err := busy.Admit(t.Context()); !errors.As(err, &r) || !strings.Contains(r.Message, "key 'busy' on tool calls") {
			t.Fatalf("got %v, want the key's tool calls refused", err)
		}
	}
	for i := range 2 {
		if err := other.Admit(t.Context()); err != nil {
			t.Fatalf("call %d of the team's other key: %v (refused calls held the team's rpm)", i, err)
		}
	}
	if err := other.Admit(t.Context()); !errors.As(err, &r) || !strings.Contains(r.Message, "team 'search'") {
		t.Fatalf("got %v, want the team's rpm reached at 3", err)
	}
}
