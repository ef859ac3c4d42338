package server

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/provider/openai"
	"github.com/sluice-gw/sluice/internal/provider/sim"
	"github.com/sluice-gw/sluice/internal/redact"
	"github.com/sluice-gw/sluice/internal/relay"
)

// FromConfig builds the server a configuration describes: one provider client per provider,
// one chain per alias. Providers of a kind this build does not serve yet are left out with a
// warning, like providers without a key.
func FromConfig(c *config.Config, log *slog.Logger) (*Server, error) {
	o := Options{
		Chains:       map[string]*fallback.Chain{},
		Providers:    map[string]fallback.Provider{},
		MaxBodyBytes: c.Limits.MaxBodyBytes,
		Heartbeat:    c.HeartbeatInterval.Std(),
		Log:          log,
		Timeouts: fallback.Timeouts{Connect: 5 * time.Second, FirstEvent: 120 * time.Second,
			Idle: 60 * time.Second, Total: 10 * time.Minute},
	}
	for _, w := range c.Warnings {
		log.Warn("config", "warning", w)
	}
	for name, p := range c.Providers {
		switch p.Kind {
		case "openai", "openai-compatible":
			if p.API == "responses" {
				log.Warn("provider left out: the responses API is not served yet", "provider", name)
				continue
			}
			o.Providers[name] = openai.New(openai.Config{Name: name, BaseURL: p.BaseURL, APIKey: p.APIKey,
				Headers: p.Headers, Query: p.Query, NoStreamOptions: !p.StreamOptions})
		case "sim":
			o.Providers[name] = sim.New(name)
		default:
			log.Warn("provider left out: its kind is not served yet", "provider", name, "kind", p.Kind)
		}
	}
	// One health store for every chain: a target's cooldown holds whichever alias calls it.
	health := &fallback.Memory{}
	o.Health, o.Policies = health, map[string]Policy{}
	for _, alias := range c.AliasNames() {
		a := c.Models[alias]
		ch := &fallback.Chain{Alias: alias, CommitOnReasoning: a.CommitOnReasoning, Health: health, Log: log}
		for _, e := range a.Targets {
			var el fallback.Element
			for i, t := range e.Targets {
				pn, model, _ := config.SplitTarget(t)
				prov, ok := o.Providers[pn]
				if !ok {
					continue
				}
				el.Targets = append(el.Targets, fallback.Target{Name: t, Model: model, Provider: prov,
					Timeouts: timeouts(e.Timeouts), Retries: e.Retries})
				el.Weights = append(el.Weights, e.Weights[i])
			}
			if len(el.Targets) > 0 {
				ch.Elements = append(ch.Elements, el)
			}
		}
		if len(ch.Elements) == 0 {
			log.Warn("alias left out: none of its targets is served", "alias", alias)
			continue
		}
		o.Chains[alias] = ch
		o.Policies[alias] = Policy{ThinkFilter: a.ThinkFilter, RedactInput: a.RedactInput,
			Coalesce: relay.Coalesce{Events: a.Coalesce.Events, Interval: a.Coalesce.Interval.Std()}}
		o.Models = append(o.Models, alias)
	}
	for _, t := range c.Targets() {
		if pn, _, _ := config.SplitTarget(t); o.Providers[pn] != nil {
			o.Models = append(o.Models, t)
		}
	}
	rules, err := redact.Compile(redactConfig(c.Redaction))
	if err != nil {
		return nil, fmt.Errorf("redaction: %w", err)
	}
	o.NewWindow = func() relay.Window { return rules.NewWindow() }
	o.RedactJSON = rules.RedactJSON
	o.RedactText = rules.Redact
	return New(o), nil
}

func timeouts(t config.Timeouts) fallback.Timeouts {
	return fallback.Timeouts{Connect: t.Connect.Std(), FirstEvent: t.FirstEvent.Std(), Idle: t.Idle.Std(), Total: t.Total.Std()}
}

func redactConfig(r config.Redaction) redact.Config {
	rc := redact.Config{Detectors: r.Detectors, PII: r.PII, WindowBytes: r.WindowBytes,
		MaxMatchBytes: r.MaxMatchBytes, MaxRunBytes: r.MaxRunBytes, Terms: r.Terms}
	for _, p := range r.Patterns {
		rc.Patterns = append(rc.Patterns, redact.Pattern{Name: p.Name, Regex: p.Regex})
	}
	return rc
}
