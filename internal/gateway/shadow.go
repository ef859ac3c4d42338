package gateway

import (
	"log/slog"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/relay"
	"github.com/sluice-gw/sluice/internal/server"
	"github.com/sluice-gw/sluice/internal/shadow"
	"github.com/sluice-gw/sluice/internal/telemetry"
	"github.com/sluice-gw/sluice/internal/usage"
)

// shadowFromConfig is the traffic mirror of the aliases with a shadow: (issue 49), its
// records going to record, priced by o's price table; nil when no alias has one. A shadow
// whose alias or provider was left out (no key, no credentials) is left out with a warning.
func shadowFromConfig(c *config.Config, o *server.Options, record func(*telemetry.Access), log *slog.Logger) *shadow.Mirror {
	targets := map[string]shadow.Target{}
	for _, alias := range c.AliasNames() {
		s := c.Models[alias].Shadow
		if s == nil || o.Chains[alias] == nil {
			continue
		}
		pn, model, _ := config.SplitTarget(s.Target)
		p := o.Providers[pn]
		if p == nil {
			log.Warn("shadow left out: its provider is not served", "alias", alias, "target", s.Target)
			continue
		}
		// A chain of one target, with a direct target's timeouts and no health: its failures
		// put nothing in cooldown for the real traffic.
		ch := &fallback.Chain{Alias: alias, CommitOnReasoning: c.Models[alias].CommitOnReasoning,
			Targets: []fallback.Target{{Name: s.Target, Model: model, Provider: p, Timeouts: o.Timeouts}}}
		pol := o.Policies[alias]
		targets[alias] = shadow.Target{Chain: ch, Percent: s.Percent, Relay: relay.Options{NewWindow: o.NewWindow,
			RedactJSON: o.RedactJSON, ThinkFilter: pol.ThinkFilter}}
	}
	prices := o.Usage.Prices
	return shadow.New(shadow.Options{Targets: targets, Record: record, Log: log,
		Cost: func(target, model string, u llm.Usage) float64 {
			p, _ := prices.Lookup(target, model)
			return usage.USD(usage.Cost(p, u))
		}})
}

// tee hands each record to every f that is not nil.
func tee(fs ...func(*telemetry.Access)) func(*telemetry.Access) {
	return func(in *telemetry.Access) {
		for _, f := range fs {
			if f != nil {
				f(in)
			}
		}
	}
}
