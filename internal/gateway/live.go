package gateway

import (
	"github.com/sluice-gw/sluice/internal/dialect/realtime"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/live"
	"github.com/sluice-gw/sluice/internal/redact"
	"github.com/sluice-gw/sluice/internal/server"
)

// liveFromConfig is the Realtime sessions' service (docs/realtime.md, issue 48): the
// chains and direct targets of o, once built, and the redaction rules, whose windows mask
// the sessions' text and transcript deltas.
func liveFromConfig(o *server.Options, rules *redact.Rules) *live.Service {
	return &live.Service{Catalog: fallback.NewCatalog(o.Chains, o.Providers, o.Health, o.Log, o.Timeouts),
		Session: realtime.Options{NewWindow: func() realtime.Window { return rules.NewWindow() },
			RedactText: rules.Redact, RedactJSON: rules.RedactJSON}}
}
