package gateway

import (
	"log/slog"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/runs"
	"github.com/sluice-gw/sluice/internal/server"
)

// uiFromConfig builds the runs on the gate's Redis when there is one (every replica can then
// resume and stop every run; under redis.on_failure: open a run still serves its own
// connection while Redis is down), in memory otherwise.
func uiFromConfig(c *config.Config, rs *redisstore.Store, log *slog.Logger) server.UI {
	o := runs.Options{FlushInterval: c.Runs.FlushInterval.Std(), TTL: c.Runs.TTL.Std(), MaxRounds: c.Runs.MaxRounds, Log: log}
	if rs != nil {
		o.Store, o.FailOpen = rs.RunLog(), rs.FailOpen()
	}
	ui := server.UI{Runs: runs.NewManager(o), RunOptions: o, Restart: map[string]bool{}, Origins: c.CORS.AllowedOrigins}
	for name, a := range c.Models {
		if a.OnMidstreamFailure == "restart" {
			ui.Restart[name] = true
		}
	}
	return ui
}
