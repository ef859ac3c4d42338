package gateway

import (
	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/dialect/realtime"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/live"
	"github.com/sluice-gw/sluice/internal/redact"
	"github.com/sluice-gw/sluice/internal/server"
)

// liveFromConfig is the Realtime sessions' service (docs/realtime.md, issue 48): the
// chains and direct targets of o, once built, the redaction rules, whose windows mask the
// sessions' text and transcript deltas, and the realtime: block's limits.
func liveFromConfig(c *config.Config, o *server.Options, rules *redact.Rules) *live.Service {
	r := c.Realtime
	return &live.Service{Catalog: fallback.NewCatalog(o.Chains, o.Providers, o.Health, o.Log, o.Timeouts),
		Session: realtime.Options{NewWindow: func() realtime.Window { return rules.NewWindow() },
			RedactText: rules.Redact, RedactJSON: rules.RedactJSON,
			ReadLimit: int64(r.MaxMessage), Ping: r.PingInterval.Std(), DrainTimeout: r.DrainTimeout.Std()}}
}

// drainLive makes the server's Close drain lv's sessions first, and wait for their records
// (which lv learns of from o's Record) before the request log and Redis close. Called once
// every other closer is in o.
func drainLive(o *server.Options, lv *live.Service) {
	o.Telemetry.Record = tee(o.Telemetry.Record, lv.Recorded)
	o.Gate.Closer = closers{lv, o.Gate.Closer}
}
