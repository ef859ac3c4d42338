package server

import (
	"log/slog"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/limit"
	"github.com/sluice-gw/sluice/internal/redisstore"
)

// gateFromConfig builds the gate and the health store: in Redis when redis.url is set, in
// memory otherwise. Auth is on when keys or an admin token are configured (DESIGN §6).
func gateFromConfig(c *config.Config, log *slog.Logger) (Gate, fallback.Health, error) {
	g := Gate{Window: time.Minute, AdminToken: c.Auth.AdminToken}
	var (
		store  auth.Store      = &auth.Memory{}
		lim    limit.Limiter   = &limit.Memory{}
		health fallback.Health = &fallback.Memory{}
	)
	if c.Redis.URL != "" {
		rs, err := redisstore.New(redisstore.Options{URL: c.Redis.URL, FailOpen: c.Redis.OnFailure == "open",
			Timeout: c.Redis.Timeout.Std(), Spool: c.Redis.Spool, Log: log})
		if err != nil {
			return g, nil, err
		}
		store, lim, health = rs.Keys(), rs.Limiter(), rs.Health()
		g.Shared, g.FailOpen, g.closer, g.redis = rs, rs.FailOpen(), rs, rs
	}
	g.Limiter = lim
	if c.AuthEnabled() {
		g.Keys = auth.NewKeys(staticKeys(c.Keys), store)
	}
	return g, health, nil
}

// staticKeys are the keys of the file. Their ids derive from their hashes: stable across
// restarts and replicas (the limit logs are keyed by id), and never the key.
func staticKeys(ks []config.Key) []*auth.Key {
	out := make([]*auth.Key, len(ks))
	for i, k := range ks {
		out[i] = &auth.Key{ID: "cfg_" + k.Hash[:16], Name: k.Name, Hash: k.Hash, Models: k.Models,
			RPM: k.Limits.RPM, TPM: k.Limits.TPM, ExpiresAt: k.ExpiresAt.Time, Metadata: k.Metadata,
			DailyUSD: k.Budget.DailyUSD, MonthlyUSD: k.Budget.MonthlyUSD, Guardrails: k.Guardrails}
	}
	return out
}
