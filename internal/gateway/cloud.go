package gateway

import (
	"context"
	"log/slog"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/azure"
	"github.com/sluice-gw/sluice/internal/provider/bedrock"
	"github.com/sluice-gw/sluice/internal/provider/gemini"
	"github.com/sluice-gw/sluice/internal/provider/vertex"
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
		return vertex.New(vertex.Config{Name: name, Endpoint: p.BaseURL, Project: p.Project, Location: p.Location,
			Token: token, Headers: p.Headers, Scrub: scrub}), true
	}
	return nil, false
}

// azureProvider builds an Azure OpenAI provider: the api-key if given, else an Entra ID
// token as it is, else the client-credentials grant (config keeps out a provider with none).
func azureProvider(name string, p config.Provider, scrub llm.Scrub) *azure.Client {
	c := azure.Config{Name: name, Endpoint: p.BaseURL, Deployments: p.Deployments, APIVersion: p.APIVersion,
		Responses: p.API == "responses", APIKey: p.APIKey, Headers: p.Headers, Query: p.Query,
		NoStreamOptions: !p.StreamOptions, Scrub: scrub}
	switch {
	case p.APIKey != "":
	case p.EntraToken != "":
		c.Token = azure.StaticToken(p.EntraToken)
	default:
		c.Token = azure.ClientCredentials(azure.EntraTokenURL(p.TenantID), p.ClientID, p.ClientSecret)
	}
	return azure.New(c)
}
