package gateway

import (
	"context"
	"log/slog"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/bedrock"
	"github.com/sluice-gw/sluice/internal/provider/gemini"
)

// cloudProvider builds a provider of a cloud kind (bedrock, vertex), whose credentials come from the
// platform's chain rather than an api_key: false leaves it out of every chain, with a
// warning, when that chain shows no source, as a provider without its api_key is (DESIGN
// §9). Nothing here contacts the network: credentials are fetched at the first call.
func cloudProvider(name string, p config.Provider, scrub llm.Scrub, log *slog.Logger) (fallback.Provider, bool) {
	switch p.Kind {
	case "bedrock":
		c := bedrock.Config{Name: name, Region: p.Region, BaseURL: p.BaseURL, APIKey: p.APIKey,
			Headers: p.Headers, CachePoints: p.CachePoints, Scrub: scrub}
		if c.APIKey == "" {
			creds, src, err := bedrock.LoadCredentials(context.Background(), p.Region, p.Profile, p.IMDS)
			if err != nil {
				log.Warn("provider left out of every chain: no credentials", "provider", name, "kind", p.Kind, "reason", err.Error())
				return nil, false
			}
			log.Info("provider credentials", "provider", name, "kind", p.Kind, "source", src)
			c.Credentials = creds
		}
		return bedrock.New(c), true
	case "vertex":
		token, src, err := gemini.VertexCredentials(p.CredentialsFile, p.Metadata)
		if err != nil {
			log.Warn("provider left out of every chain: no credentials", "provider", name, "kind", p.Kind, "reason", err.Error())
			return nil, false
		}
		log.Info("provider credentials", "provider", name, "kind", p.Kind, "source", src)
		return gemini.New(gemini.Config{Name: name, BaseURL: gemini.VertexURL(p.BaseURL, p.Project, p.Location),
			Token: token, Headers: p.Headers, Scrub: scrub}), true
	}
	return nil, false
}
