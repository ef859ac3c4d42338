package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
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
		key, err := s.authenticate(c)
		if err != nil {
			// Bearer, without OAuth metadata: clients send the key as a header they were
			// configured with, rather than start an authorization flow.
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="sluice"`)
			return s.deny(c, err)
		}
		caller = mcpgw.KeyCaller(key, s.guardsOf("", key), s.adm.Limiter, s.adm.Span())
	}
	s.o.MCP.Serve(c.Response(), c.Request(), caller)
	return nil
}
