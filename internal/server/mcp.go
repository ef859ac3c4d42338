package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/limit"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/mcpgw"
)

// The MCP gateway's edge (issue 25): /mcp speaks MCP over Streamable HTTP (package mcpgw);
// this file authenticates the caller with the same virtual keys as /v1 and hands mcpgw what
// the key may do: its MCP servers and tools, its limits (each tool call is a request of
// its rpm, and of its tool_calls_per_minute) and its input guardrails (on the arguments).

func (s *Server) mcpRoutes(e *echo.Echo) {
	e.POST("/mcp", s.mcp)
	e.GET("/mcp", s.mcp)
	e.DELETE("/mcp", s.mcp)
}

func (s *Server) mcp(c echo.Context) error {
	if s.o.MCP == nil {
		return c.JSONBlob(http.StatusNotFound, []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"The MCP gateway is off: no MCP server is configured (tools: with mcp)."}}`))
	}
	caller := mcpgw.Caller{All: true}
	if s.o.Gate.Keys != nil {
		r := c.Request()
		secret := auth.FromRequest(r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"))
		key, err := s.o.Gate.Keys.Authenticate(r.Context(), secret, time.Now())
		if err != nil {
			// Bearer, without OAuth metadata: clients send the key as a header they were
			// configured with, rather than start an authorization flow.
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="sluice"`)
			return s.deny(c, authError(err, s.o.Gate.FailOpen))
		}
		in := reqInfo(c)
		in.KeyID, in.KeyName = key.ID, key.Name
		exchangeOf(c).key = key
		caller = mcpgw.Caller{Key: key.ID, KeyName: key.Name,
			Admit: func(ctx context.Context) error { return s.admitTool(ctx, key) },
			Check: func(ctx context.Context, args string) error { return s.checkArgs(ctx, key, args) }}
		if key.MCP != nil {
			caller.Servers, caller.Tools = key.MCP.Servers, key.MCP.Tools
		}
	}
	s.o.MCP.Serve(c.Response(), c.Request(), caller)
	return nil
}

// admitTool takes one tool call from key's limits: a request of its rpm, and one of its
// tool_calls_per_minute (logged under the key's id + ":mcp"), in that order.
func (s *Server) admitTool(ctx context.Context, key *auth.Key) error {
	g := &s.o.Gate
	if g.Limiter == nil {
		return nil
	}
	rpm, window := g.ask(key, 0)
	rpm.Tokens = limit.Rule{} // a tool call spends no tokens
	calls := rpm
	calls.Key, calls.Requests.Limit = key.ID+":mcp", key.ToolCallsPerMinute
	for _, a := range []struct {
		ask  limit.Ask
		what string
	}{{rpm, "requests"}, {calls, "tool calls"}} {
		if a.ask.Requests.Limit <= 0 {
			continue
		}
		res, err := g.Limiter.Reserve(ctx, a.ask)
		if err != nil {
			return errors.New("the limiter cannot be reached")
		}
		if !res.OK {
			return &mcpgw.Refusal{Limited: true, RetryAfter: res.RetryAfter,
				Message: fmt.Sprintf("Rate limit reached for key '%s' on %s per %s: limit %d. Try again in %s.",
					key.Name, a.what, window, a.ask.Requests.Limit, res.RetryAfter.Round(time.Millisecond))}
		}
	}
	return nil
}

// checkArgs runs the key's input guardrails on a tool call's arguments, as the text of a
// user message.
func (s *Server) checkArgs(ctx context.Context, key *auth.Key, args string) error {
	gs := s.o.Guards.of("", key)
	if len(gs) == 0 {
		return nil
	}
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: args}}}}}
	if r := gs.Input(ctx, req); r != nil {
		return &mcpgw.Refusal{Message: "The call was blocked by " + r.Error() + "."}
	}
	return nil
}
