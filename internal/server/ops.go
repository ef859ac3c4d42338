package server

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/mcpgw"
	"github.com/sluice-gw/sluice/internal/runs"
	"github.com/sluice-gw/sluice/internal/uistream"
	"github.com/sluice-gw/sluice/internal/usage"
)

// The ops of the table's routes that name no model.

// Usage is the account of the server (DESIGN §6): what each call cost and who spent it. The
// zero value keeps no account and enforces no budget.
type Usage struct {
	// Prices prices the targets; nil: the built-in table.
	Prices *usage.Prices
	// Store records the account per key, alias, target and day; nil: not recorded.
	Store usage.Store
	// Budgets enforces the keys' budgets; nil: none.
	Budgets usage.Budgets
}

// models lists aliases and direct targets in the route's wire's list format (dialect.API.Listed).
func (s *Server) models(c echo.Context) error { return c.JSONBlob(200, s.apiOf(c).Listed(s.o.Models)) }

// model is one model of the list: a listed one, or any the catalog resolves (a pattern
// alias, a direct target).
func (s *Server) model(c echo.Context) error {
	_, name, _ := strings.Cut(c.Request().URL.Path, "/models/") // the rest: "provider/model" holds a slash
	for _, m := range s.o.Models {
		if m == name {
			return c.JSONBlob(http.StatusOK, s.apiOf(c).Described(m))
		}
	}
	if _, err := s.catalog.Resolve(name); err != nil {
		return s.writeError(c, err)
	}
	return c.JSONBlob(http.StatusOK, s.apiOf(c).Described(name))
}

// mcp serves the MCP gateway (package mcpgw) with what the caller's key and its team may do:
// their MCP servers and tools (both must allow one), their limits (each tool call is a
// request of the team's and the key's rpm, and of the key's tool_calls_per_minute) and the
// key's input guardrails (on the arguments).
func (s *Server) mcp(c echo.Context) error {
	if s.o.MCP == nil {
		return c.JSONBlob(http.StatusNotFound, []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"The MCP gateway is off: no MCP server is configured (tools: with mcp)."}}`))
	}
	mp := mcpgw.Policy{TeamOf: s.adm.TeamOf, Guards: s.o.Guards, Limiter: s.adm.Limiter, Window: s.adm.Span()}
	caller, err := mp.Caller(c.Request().Context(), callerKey(c))
	if err != nil {
		return s.deny(c, err) // the key's team is gone (403) or unreadable (503): no tool, as no model
	}
	s.o.MCP.Serve(c.Response(), c.Request(), caller)
	return nil
}

// uiResume serves a run's stream again on any replica: the chat's active run in full then
// live (the AI SDK's resumeStream), or only what follows Last-Event-ID when the client sends
// it (EventSource). 204 when there is nothing to resume: no run, or a finished one and no
// Last-Event-ID (DESIGN §8). Another key's run is a 404.
func (s *Server) uiResume(c echo.Context) error {
	chat, err := uistream.ChatID(dialect.Input{Param: c.Param})
	if err != nil {
		return s.reject(c, err)
	}
	rd, err := s.o.UI.Runs.Open(c.Request().Context(), chat, reqInfo(c).KeyID, c.Request().Header.Get("Last-Event-ID"))
	if errors.Is(err, runs.ErrNoRun) {
		return c.NoContent(http.StatusNoContent)
	}
	if err != nil {
		return s.reject(c, runs.Public(err))
	}
	defer rd.Close()
	return runs.Serve(c.Request().Context(), s.edge(c), nil, rd)
}

// uiStop stops the chat's active run (its upstream call canceled), which ends with abort, on
// whichever replica runs it. 202 with the run's id; 204 when no run is active; another key's
// run is a 404.
func (s *Server) uiStop(c echo.Context) error {
	chat, err := uistream.ChatID(dialect.Input{Param: c.Param})
	if err != nil {
		return s.reject(c, err)
	}
	run, err := s.o.UI.Runs.Stop(c.Request().Context(), chat, reqInfo(c).KeyID)
	if errors.Is(err, runs.ErrNoRun) {
		return c.NoContent(http.StatusNoContent)
	}
	if err != nil {
		return s.reject(c, runs.Public(err))
	}
	return c.JSONBlob(http.StatusAccepted, uistream.Stopping(run, chat))
}
