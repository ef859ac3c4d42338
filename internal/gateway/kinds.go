package gateway

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/anthropic"
	"github.com/sluice-gw/sluice/internal/provider/cohere"
	"github.com/sluice-gw/sluice/internal/provider/gemini"
	"github.com/sluice-gw/sluice/internal/provider/jina"
	"github.com/sluice-gw/sluice/internal/provider/openai"
	"github.com/sluice-gw/sluice/internal/provider/sim"
	"github.com/sluice-gw/sluice/internal/provider/voyage"
)

// kind is how the gateway serves the providers of one kind: how it builds one, and how
// telemetry names it. The rest of a kind (its defaults, its checks, whether it needs a key)
// is data and lives in config's table, which config cannot take from here without importing
// every provider; TestKindTables keeps the names of the two tables the same.
type kind struct {
	// system is the kind's gen_ai.provider.name, a well-known value of the OpenTelemetry
	// GenAI conventions; "": the provider's own name (a server the conventions do not know).
	system string
	build  func(name string, p config.Provider, s shared) (fallback.Provider, error)
	// objects: the kind's API keeps files and batches, which its adapter passes through
	// (llm.ObjectHost, issue 48).
	objects bool
}

// shared is what every provider is built with.
type shared struct {
	// scrub masks every provider's credentials: an upstream, or a proxy before it, may quote
	// any of them in its errors (issue 19).
	scrub llm.Scrub
	log   *slog.Logger
}

// kinds is the table of provider kinds the gateway builds; one more kind is one more entry
// here and one in config's table.
var kinds = map[string]kind{
	"openai":            {system: "openai", build: buildOpenAI, objects: true},
	"openai-compatible": {build: buildOpenAI},
	"anthropic": {system: "anthropic", objects: true, build: func(name string, p config.Provider, s shared) (fallback.Provider, error) {
		return anthropic.New(anthropic.Config{Name: name, BaseURL: p.BaseURL, APIKey: p.APIKey,
			Headers: p.Headers, Scrub: s.scrub}), nil
	}},
	"gemini": {system: "gcp.gemini", build: func(name string, p config.Provider, s shared) (fallback.Provider, error) {
		return gemini.New(gemini.Config{Name: name, BaseURL: p.BaseURL, APIKey: p.APIKey,
			Headers: p.Headers, Scrub: s.scrub}), nil
	}},
	"azure":   {system: "azure.ai.openai", build: buildAzure, objects: true}, // cloud.go
	"bedrock": {system: "aws.bedrock", build: buildBedrock},                  // cloud.go
	"vertex":  {system: "gcp.vertex_ai", build: buildVertex},                 // cloud.go
	"sim": {build: func(name string, p config.Provider, _ shared) (fallback.Provider, error) {
		return sim.New(name, p.API) // validation lets only known APIs through
	}},
	"cohere": {system: "cohere", build: buildRetrieval(cohere.Routes)}, // rerankers.go
	"jina":   {build: buildRetrieval(jina.Routes)},
	"voyage": {build: buildRetrieval(voyage.Routes)},
}

func buildOpenAI(name string, p config.Provider, s shared) (fallback.Provider, error) {
	oc := openai.Config{Name: name, BaseURL: p.BaseURL, APIKey: p.APIKey,
		Headers: p.Headers, Query: p.Query, NoStreamOptions: !p.StreamOptions, Scrub: s.scrub,
		OpenAI: p.Kind == "openai"} // not openai-compatible: it may refuse OpenAI's newer members
	if p.API == "responses" {
		return openai.NewResponses(oc), nil
	}
	return openai.New(oc), nil
}

// noCredentials is a builder's error for a provider of a cloud kind whose platform's chain
// shows no source of credentials: it is left out of every chain with a warning, as a
// provider without its api_key is (DESIGN §9), not an error at start.
type noCredentials struct{ err error }

func (e noCredentials) Error() string { return "no credentials: " + e.err.Error() }
func (e noCredentials) Unwrap() error { return e.err }

// providers builds the provider of every provider of c with the table, but those left out
// for want of credentials.
func providers(c *config.Config, s shared) (map[string]fallback.Provider, error) {
	out := map[string]fallback.Provider{}
	for name, p := range c.Providers {
		k, ok := kinds[p.Kind]
		if !ok {
			return nil, fmt.Errorf("provider %q: kind %q has no builder", name, p.Kind) // TestKindTables rules it out
		}
		prov, err := k.build(name, p, s)
		if nc := (noCredentials{}); errors.As(err, &nc) {
			s.log.Warn("provider left out of every chain: no credentials", "provider", name, "kind", p.Kind, "reason", nc.err.Error())
			continue
		}
		if err != nil {
			return nil, err
		}
		out[name] = prov
	}
	return out, nil
}
