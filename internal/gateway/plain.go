package gateway

import (
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/embeddings"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/server"
)

// plainChains builds the chains of the plain endpoints' aliases (embeddings, moderations,
// images and their edits, rerank, transcriptions, speech), by path, into o.Plain's
// resolver, and lists the aliases in o.Models after the chat aliases. A target whose provider cannot serve the endpoint is dropped with a warning,
// like a provider without a key.
func plainChains(c *config.Config, o *server.Options, health fallback.Health, log *slog.Logger) {
	chains := map[string]map[string]*fallback.Chain{}
	for _, sec := range c.Plain() {
		for _, path := range sec.Paths() {
			chains[path] = map[string]*fallback.Chain{}
			for _, alias := range slices.Sorted(maps.Keys(sec.Aliases)) {
				if ch := plainChain(o, sec, path, alias, log); ch != nil {
					ch.CommitOnReasoning, ch.Health, ch.Log = true, health, log
					chains[path][alias] = ch
					if path == sec.Path { // listed once, whatever paths it serves
						o.Models = append(o.Models, alias)
					}
				}
			}
		}
	}
	o.Plain = plainResolver(c, o, chains, health, log)
}

// plainChain is the chain of sec's alias on path (one of sec.Paths), nil when none of its
// targets serves it (said in a warning).
func plainChain(o *server.Options, sec config.PlainSection, path, alias string, log *slog.Logger) *fallback.Chain {
	ch := buildChain(alias, sec.Aliases[alias].Targets, func(t, pn string) (fallback.Provider, bool) {
		em, ok := embeddings.TargetOf(o.Providers[pn], path)
		if !ok { // the configuration checked its kind serves the endpoint
			if o.Providers[pn] != nil {
				log.Warn(sec.Name+" target left out: its provider does not serve "+path, "alias", alias, "target", t)
			}
			return nil, false
		}
		return em, true
	})
	if ch == nil {
		log.Warn(sec.Name+" alias left out of "+path+": none of its targets is served", "alias", alias)
	}
	return ch
}

// plainResolver finds the chain of a model on a plain endpoint (server.Options.Plain): one
// of the endpoint's aliases (chains, by path), or "provider/model" of a provider whose kind
// serves it (the kind table's word, config.Kind), as one target. Anything else is a 404
// that says why: a chat alias, a provider that does not serve the endpoint, or unknown.
func plainResolver(c *config.Config, o *server.Options, chains map[string]map[string]*fallback.Chain,
	health fallback.Health, log *slog.Logger) func(*dialect.API, string) (*fallback.Chain, error) {
	catalogs := map[string]*fallback.Catalog{}
	for _, api := range server.Wires {
		if path := api.Upstream; path != "" {
			serves := func(p string) bool {
				i := slices.IndexFunc(c.Plain(), func(s config.PlainSection) bool { return slices.Contains(s.Paths(), path) })
				return i >= 0 && c.Plain()[i].ServesOn(c.Providers[p], path)
			}
			catalogs[path] = fallback.NewCatalog(chains[path], embeddings.Targets(o.Providers, path, serves), health, log, o.Timeouts)
		}
	}
	aliases, providers := o.Chains, o.Providers
	return func(api *dialect.API, model string) (*fallback.Chain, error) {
		if ch := catalogs[api.Upstream].Find(model); ch != nil {
			return ch, nil
		}
		msg := "The model '" + model + "' does not exist or you do not have access to it."
		if _, ok := aliases[model]; ok {
			msg = "The model '" + model + "' is a chat model alias, not an " + api.Name + " alias."
		} else if p, _, _ := strings.Cut(model, "/"); providers[p] != nil {
			msg = "The provider '" + p + "' does not serve " + api.Name + " (its kind does not: see docs/providers.md)."
		}
		return nil, fallback.UnknownModel(msg)
	}
}
