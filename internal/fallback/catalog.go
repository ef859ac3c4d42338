package fallback

import (
	"log/slog"
	"path"
	"slices"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Catalog is the chains a gateway serves by model name: its aliases, of which some names are
// patterns (path.Match: "claude-*"), and "provider/model" for a model of a configured
// provider, served as a chain of one target. Read-only once made; safe for concurrent use.
type Catalog struct {
	chains    map[string]*Chain
	patterns  []string // the aliases whose name is a pattern, most specific first
	providers map[string]Provider
	health    Health
	log       *slog.Logger
	timeouts  Timeouts
}

// NewCatalog is the catalog of chains and of direct targets of providers; a direct target's
// chain shares health, logs to log and has timeouts t.
func NewCatalog(chains map[string]*Chain, providers map[string]Provider, health Health, log *slog.Logger, t Timeouts) *Catalog {
	c := &Catalog{chains: chains, providers: providers, health: health, log: log, timeouts: t}
	for name := range chains {
		if strings.ContainsAny(name, "*?[") {
			c.patterns = append(c.patterns, name)
		}
	}
	// The most specific first: the most literal characters, then by name, so the order does
	// not depend on the map's.
	literal := func(p string) int { return len(p) - strings.Count(p, "*") - strings.Count(p, "?") }
	slices.SortFunc(c.patterns, func(a, b string) int {
		if d := literal(b) - literal(a); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return c
}

// Find is the chain that serves model: the alias of that name, the most specific alias
// whose name is a pattern model matches, or "provider/model" as one target; nil: none.
func (c *Catalog) Find(model string) *Chain {
	if ch, ok := c.chains[model]; ok {
		return ch
	}
	for _, p := range c.patterns {
		if ok, _ := path.Match(p, model); ok {
			return c.chains[p]
		}
	}
	if p, m, ok := strings.Cut(model, "/"); ok && m != "" {
		if prov, ok := c.providers[p]; ok && prov != nil {
			return &Chain{Alias: model, CommitOnReasoning: true, Health: c.health, Log: c.log,
				Targets: []Target{{Name: model, Model: m, Provider: prov, Timeouts: c.timeouts}}}
		}
	}
	return nil
}

// Resolve is the chain that serves model (Find), or a 404 model_not_found that says so.
func (c *Catalog) Resolve(model string) (*Chain, error) {
	if ch := c.Find(model); ch != nil {
		return ch, nil
	}
	return nil, UnknownModel("The model '" + model + "' does not exist or you do not have access to it.")
}

// UnknownModel is the error of a model no chain serves, saying msg: 404 model_not_found.
func UnknownModel(msg string) error {
	return &llm.Error{Kind: llm.NotFound, Param: "model", Code: "model_not_found", Type: "invalid_request_error", Message: msg}
}
