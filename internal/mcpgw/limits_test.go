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
	c := KeyCaller(key, nil, &limit.Memory{}, time.Minute)
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
	if KeyCaller(key, nil, nil, time.Minute).Admit != nil {
		t.Error("no limiter, but an Admit")
	}
}
