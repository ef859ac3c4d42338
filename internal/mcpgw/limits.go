package mcpgw

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/guard"
	"github.com/sluice-gw/sluice/internal/limit"
	"github.com/sluice-gw/sluice/internal/llm"
)

// Limit is one limit a tool call counts against: one request of Rule in the log Log.
type Limit struct {
	Log  string // whose log: a key's id (its rpm), or id + ":mcp" (its tool_calls_per_minute)
	What string // what the refusal calls it: "requests", "tool calls"
	Rule limit.Rule
}

// Admit is a Caller.Admit that reserves one request of each limit with a positive Rule, in
// order, under lim; key names the key in a refusal (never the key itself).
func Admit(lim limit.Limiter, key string, limits ...Limit) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		for _, l := range limits {
			if l.Rule.Limit <= 0 {
				continue
			}
			var b [8]byte
			_, _ = rand.Read(b[:])
			res, err := lim.Reserve(ctx, limit.Ask{Key: l.Log, ID: hex.EncodeToString(b[:]), Requests: l.Rule})
			if err != nil {
				return errors.New("the limiter cannot be reached")
			}
			if !res.OK {
				return &Refusal{Limited: true, RetryAfter: res.RetryAfter,
					Message: fmt.Sprintf("Rate limit reached for key '%s' on %s per %s: limit %d. Try again in %s.",
						key, l.What, l.Rule.Window, l.Rule.Limit, res.RetryAfter.Round(time.Millisecond))}
			}
		}
		return nil
	}
}

// KeyCaller is the Caller of key: its MCP servers and tools, its guardrails gs on the
// arguments, and under lim (nil: no limits) each call a request of its rpm, then one of its
// tool_calls_per_minute, both over window.
func KeyCaller(key *auth.Key, gs guard.Set, lim limit.Limiter, window time.Duration) Caller {
	c := Caller{Key: key.ID, KeyName: key.Name, Check: Screen(gs)}
	if lim != nil {
		c.Admit = Admit(lim, key.Name, Limit{Log: key.ID, What: "requests", Rule: limit.Rule{Limit: key.RPM, Window: window}},
			Limit{Log: key.ID + ":mcp", What: "tool calls", Rule: limit.Rule{Limit: key.ToolCallsPerMinute, Window: window}})
	}
	if key.MCP != nil {
		c.Servers, c.Tools = key.MCP.Servers, key.MCP.Tools
	}
	return c
}

// Screen is a Caller.Check that runs the input guardrails of gs on a call's arguments, as
// the text of a user message; nil when gs has none.
func Screen(gs guard.Set) func(ctx context.Context, args string) error {
	if len(gs) == 0 {
		return nil
	}
	return func(ctx context.Context, args string) error {
		req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: args}}}}}
		if r := gs.Input(ctx, req); r != nil {
			return &Refusal{Message: "The call was blocked by " + r.Error() + "."}
		}
		return nil
	}
}
