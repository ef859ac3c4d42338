package gateway

import (
	"cmp"
	"context"
	"time"

	"github.com/sluice-gw/sluice/internal/cache"
	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/guard"
	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// guardsFromConfig compiles the guardrails and attaches them to their aliases. A guardrail
// that does not compile (a bad schema) stops the gateway at start.
func guardsFromConfig(c *config.Config) (guard.Catalog, error) {
	gs := guard.Catalog{ByName: map[string]*guard.Guardrail{}, ByAlias: map[string][]*guard.Guardrail{}}
	for name, g := range c.Guardrails {
		compiled, err := guard.New(guard.Spec{Name: name, Stage: g.Stage, Kind: g.Kind, Mode: g.Mode, Action: g.Action,
			Terms: g.Terms, Pattern: g.Pattern, Schema: g.Schema, MaxBytes: g.MaxBytes, MaxTokens: g.MaxTokens})
		if err != nil {
			return guard.Catalog{}, err
		}
		gs.ByName[name] = compiled
	}
	for alias, a := range c.Models {
		for _, name := range a.Guardrails {
			gs.ByAlias[alias] = append(gs.ByAlias[alias], gs.ByName[name])
		}
	}
	return gs, nil
}

// telemetryOptions are the telemetry: block's per-server options.
func telemetryOptions(c *config.Config) telemetry.Options {
	o := telemetry.Options{CaptureContent: c.Telemetry.CaptureContent, Window: c.Telemetry.StatsWindow.Std(),
		Providers: map[string]string{}}
	for name, p := range c.Providers {
		o.Providers[name] = cmp.Or(kinds[p.Kind].system, name) // kinds.go
	}
	return o
}

// cooldowns counts the targets a failure puts (back) in cooldown: a decorator, so that
// fallback needs no telemetry of its own.
type cooldowns struct{ fallback.Health }

// Cooling is what remains of target's cooldown (fallback.Watcher), 0 when the store cannot
// tell without taking a probe.
func (h cooldowns) Cooling(ctx context.Context, target string) time.Duration {
	if w, ok := h.Health.(fallback.Watcher); ok {
		return w.Cooling(ctx, target)
	}
	return 0
}

func (h cooldowns) Failure(ctx context.Context, target string, retryAfter time.Duration) time.Duration {
	left := h.Health.Failure(ctx, target, retryAfter)
	if left > 0 {
		telemetry.Cooldown(ctx, target, left)
	}
	return left
}

// cacheFromConfig is the response cache (issue 24): in Redis when configured, so every
// replica shares it, else in this process's memory; nil when no alias caches.
func cacheFromConfig(c *config.Config, rs *redisstore.Store) *cache.Cache {
	for _, a := range c.Models {
		if a.Cache != nil {
			if rs != nil {
				return &cache.Cache{Store: rs.Cache(), Board: rs.Cache(), Lease: c.Cache.Lease.Std()} // flights across replicas too
			}
			return &cache.Cache{Store: &cache.Memory{MaxBytes: int(c.Cache.MemoryBytes)}}
		}
	}
	return nil
}

// cachePolicy is an alias's cache as the server applies it; nil: none.
func cachePolicy(a config.Alias) *cache.Policy {
	if a.Cache == nil {
		return nil
	}
	return &cache.Policy{TTL: a.Cache.TTL.Std(), MaxEntryBytes: int(a.Cache.MaxEntryBytes), Scope: cache.Scope(a.Cache.Scope),
		Nondeterministic: a.Cache.Nondeterministic, ClientBypass: a.Cache.ClientBypass}
}

var (
	_ cache.Store = (*redisstore.Cache)(nil)
	_ cache.Board = (*redisstore.Cache)(nil)
)
