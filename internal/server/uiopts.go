package server

import (
	"context"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/runs"
	"github.com/sluice-gw/sluice/internal/tools"
)

// UI is what frontend runs need (DESIGN §8; ui.go): the manager of the runs, the aliases that
// restart a round on the next target when the committed one fails, and the browser origins
// CORS lets through.
type UI struct {
	// Runs runs and serves the frontend runs; nil: New makes one in memory. Server.Close
	// closes it.
	Runs *runs.Manager
	// RunOptions are what Runs was made with, for tests that remake it.
	RunOptions runs.Options
	// Restart holds the aliases with on_midstream_failure: restart.
	Restart map[string]bool
	// Origins are cors.allowed_origins ("*": any); none: no CORS headers.
	Origins []string
	// Tools are the server-side tools the aliases offer.
	Tools ServerTools
}

// ServerTools are the server-side tools of frontend runs (DESIGN §8, package tools): the
// configured tools and which aliases offer which.
type ServerTools struct {
	// Set runs the tools; nil: none configured. Server.Close closes it.
	Set *tools.Set
	// Offers lists, per alias, the tools (names in the config's tools:) it offers the model.
	Offers map[string][]string
}

// uiRoutes serves frontend runs and answers CORS for /v1 (cors.go).
func (s *Server) uiRoutes(e *echo.Echo) {
	if s.o.UI.Runs == nil {
		s.o.UI.Runs = runs.NewManager(runs.Options{Log: s.o.Log})
	}
	e.Pre(s.cors)
	e.POST("/v1/ui/chat", s.uiChat)
	e.GET("/v1/ui/chat/:chatId/stream", s.uiResume)
	e.POST("/v1/ui/chat/:chatId/stop", s.uiStop)
}

// offerTools adds the alias's server-side tools to a run's request and returns what runs
// them (nil: the alias offers none, and every call goes to the client; tools.Offer.Add).
func (s *Server) offerTools(ctx context.Context, alias string, req *llm.Request) (runs.Tools, error) {
	st := s.o.UI.Tools
	if st.Set == nil || len(st.Offers[alias]) == 0 {
		return nil, nil
	}
	o := st.Set.Offer(ctx, st.Offers[alias], s.o.Policies[alias].RedactInput)
	if len(o.Tools()) == 0 {
		return nil, nil // an MCP server that is down offers nothing meanwhile
	}
	if err := o.Add(req, alias); err != nil {
		return nil, err
	}
	return o, nil
}
