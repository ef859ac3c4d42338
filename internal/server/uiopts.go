package server

import (
	"github.com/labstack/echo/v4"
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
	// Tools are the server-side tools the aliases offer; Server.Close closes their Set.
	Tools tools.Menu
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
