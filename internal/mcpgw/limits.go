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
	Log   string // whose log: a key's id (its rpm), id + ":mcp" (its tool_calls_per_minute), a team's Scope
	What  string // what the refusal calls it: "requests", "tool calls"
	Whose string // whom the refusal names: "key 'ci'", "team 'search'" (never the key itself)
	Rule  limit.Rule
}

// Admit is a Caller.Admit that reserves one request of each limit with a positive Rule, in
// order, under lim. When one refuses (or the limiter fails), the requests already reserved
// are released (limit.Limiter.Release), as admission does for a model request: a key at its
// tool_calls_per_minute must not use up its team's rpm, nor its own, with calls it was refused.
func Admit(lim limit.Limiter, limits ...Limit) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id := hex.EncodeToString(b[:]) // one id for every log: what is released is this call's
		var held []string
		release := func() {
			for _, log := range held {
				_ = lim.Release(ctx, log, id)
			}
		}
		for _, l := range limits {
			if l.Rule.Limit <= 0 {
				continue
			}
			res, err := lim.Reserve(ctx, limit.Ask{Key: l.Log, ID: id, Requests: l.Rule})
			if err != nil {
				release()
				return errors.New("the limiter cannot be reached")
			}
			if !res.OK {
				release()
				return &Refusal{Limited: true, RetryAfter: res.RetryAfter,
					Message: fmt.Sprintf("Rate limit reached for %s on %s per %s: limit %d. Try again in %s.",
						l.Whose, l.What, l.Rule.Window, l.Rule.Limit, res.RetryAfter.Round(time.Millisecond))}
			}
			held = append(held, l.Log)
		}
		return nil
	}
}

// KeyCaller is the Caller of key and of its team (nil: none): the key's MCP servers and
// tools, and the team's MCP access on top (both must allow a tool, issue 37); the
// guardrails gs on the arguments; and under lim (nil: no limits) each call a request of
// the team's rpm, then of the key's, then one of the key's tool_calls_per_minute, all
// over window. The team first, as admission orders a model request's limits.
func KeyCaller(key *auth.Key, team *auth.Team, gs guard.Set, lim limit.Limiter, window time.Duration) Caller {
	c := Caller{Key: key.ID, KeyName: key.Name, Check: Screen(gs)}
	var limits []Limit
	if team != nil {
		if team.MCP != nil {
			c.Team = team.AllowsMCP
		}
		limits = append(limits, Limit{Log: team.Scope(), What: "requests", Whose: "team '" + team.Name + "'",
			Rule: limit.Rule{Limit: team.RPM, Window: window}})
	}
	whose := "key '" + key.Name + "'"
	limits = append(limits, Limit{Log: key.ID, What: "requests", Whose: whose, Rule: limit.Rule{Limit: key.RPM, Window: window}},
		Limit{Log: key.ID + ":mcp", What: "tool calls", Whose: whose, Rule: limit.Rule{Limit: key.ToolCallsPerMinute, Window: window}})
	if lim != nil {
		c.Admit = Admit(lim, limits...)
	}
	if key.MCP != nil {
		c.Servers, c.Tools = key.MCP.Servers, key.MCP.Tools
	}
	return c
}

// Policy is what the edge holds of the keys' MCP access besides the keys themselves.
type Policy struct {
	// TeamOf is the team of a key (admit.Policy.TeamOf): nil and no error when it has none;
	// an error when its team does not exist or cannot be read.
	TeamOf  func(ctx context.Context, key *auth.Key) (*auth.Team, error)
	Guards  guard.Catalog
	Limiter limit.Limiter
	Window  time.Duration
}

// Caller is the Caller of key (nil: auth off, every tool). An error of TeamOf is returned
// as is, for the edge to refuse the request with: a key whose team is gone or unreadable
// uses no tool, as it calls no model.
func (p Policy) Caller(ctx context.Context, key *auth.Key) (Caller, error) {
	if key == nil {
		return Caller{All: true}, nil
	}
	var team *auth.Team
	if p.TeamOf != nil {
		var err error
		if team, err = p.TeamOf(ctx, key); err != nil {
			return Caller{}, err
		}
	}
	return KeyCaller(key, team, p.Guards.Of("", key.Guardrails), p.Limiter, p.Window), nil
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
