package gateway

import (
	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/provider/retrieval"
)

// buildRetrieval builds a provider of a kind that serves only plain endpoints (cohere, jina,
// voyage: issue 48), whose wire is routes.
func buildRetrieval(routes map[string]retrieval.Route) func(string, config.Provider, shared) (fallback.Provider, error) {
	return func(name string, p config.Provider, s shared) (fallback.Provider, error) {
		return retrieval.New(retrieval.Config{Name: name, BaseURL: p.BaseURL, APIKey: p.APIKey,
			Headers: p.Headers, Routes: routes, Scrub: s.scrub}), nil
	}
}
