package server

import (
	"log/slog"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/runs"
)

// UI is what frontend runs need (DESIGN §8; ui.go): the manager of the runs, the aliases that
// restart a round on the next target when the committed one fails, and the browser origins
// CORS lets through.
type UI struct {
	// Runs runs and serves the frontend runs; nil: New makes one in memory. Server.Close
	// closes it.
	Runs *runs.Manager
	// Restart holds the aliases with on_midstream_failure: restart.
	Restart map[string]bool
	// Origins are cors.allowed_origins ("*": any); none: no CORS headers.
	Origins []string
	// Tools are the server-side tools the aliases offer (uitools.go).
	Tools ServerTools

	opts runs.Options // what Runs was made with, for tests that remake it
}

// uiFromConfig builds the runs on the gate's Redis when there is one (every replica can then
// resume and stop every run; under redis.on_failure: open a run still serves its own
// connection while Redis is down), in memory otherwise.
func uiFromConfig(c *config.Config, g Gate, log *slog.Logger) UI {
	o := runs.Options{FlushInterval: c.Runs.FlushInterval.Std(), TTL: c.Runs.TTL.Std(), MaxRounds: c.Runs.MaxRounds, Log: log}
	if rs, ok := g.Shared.(*redisstore.Store); ok {
		o.Store, o.FailOpen = rs.RunLog(), rs.FailOpen()
	}
	ui := UI{Runs: runs.NewManager(o), Restart: map[string]bool{}, Origins: c.CORS.AllowedOrigins, opts: o}
	for name, a := range c.Models {
		if a.OnMidstreamFailure == "restart" {
			ui.Restart[name] = true
		}
	}
	return ui
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
