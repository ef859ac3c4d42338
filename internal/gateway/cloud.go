package gateway

import (
	"context"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/provider/azure"
	"github.com/sluice-gw/sluice/internal/provider/bedrock"
	"github.com/sluice-gw/sluice/internal/provider/gemini"
	"github.com/sluice-gw/sluice/internal/provider/vertex"
)

// The builders of the cloud kinds (bedrock, vertex), whose credentials come from the
// platform's chain rather than an api_key: noCredentials leaves a provider out of every
// chain, with a warning, when that chain shows no source. Nothing here contacts the network:
// credentials are fetched at the first call.

func buildBedrock(name string, p config.Provider, s shared) (fallback.Provider, error) {
	c := bedrock.Config{Name: name, Region: p.Region, BaseURL: p.BaseURL, APIKey: p.APIKey,
		Headers: p.Headers, CachePoints: p.CachePoints, Scrub: s.scrub}
	if c.APIKey == "" {
		creds, src, err := bedrock.LoadCredentials(context.Background(), p.Region, p.Profile, p.IMDS)
		if err != nil {
			return nil, noCredentials{err}
		}
		s.log.Info("provider credentials", "provider", name, "kind", p.Kind, "source", src)
		c.Credentials = creds
	}
	return bedrock.New(c), nil
}

func buildVertex(name string, p config.Provider, s shared) (fallback.Provider, error) {
	token, src, err := gemini.VertexCredentials(p.CredentialsFile, p.Metadata)
	if err != nil {
		return nil, noCredentials{err}
	}
	s.log.Info("provider credentials", "provider", name, "kind", p.Kind, "source", src)
	return vertex.New(vertex.Config{Name: name, Endpoint: p.BaseURL, Project: p.Project, Location: p.Location,
		Token: token, Headers: p.Headers, Scrub: s.scrub}), nil
}

// buildAzure builds an Azure OpenAI provider: the api-key if given, else an Entra ID
// token as it is, else the client-credentials grant (config keeps out a provider with none).
func buildAzure(name string, p config.Provider, s shared) (fallback.Provider, error) {
	c := azure.Config{Name: name, Endpoint: p.BaseURL, Deployments: p.Deployments, APIVersion: p.APIVersion,
		Responses: p.API == "responses", APIKey: p.APIKey, Headers: p.Headers, Query: p.Query,
		NoStreamOptions: !p.StreamOptions, Scrub: s.scrub}
	switch {
	case p.APIKey != "":
	case p.EntraToken != "":
		c.Token = azure.StaticToken(p.EntraToken)
	default:
		c.Token = azure.ClientCredentials(azure.EntraTokenURL(p.TenantID), p.ClientID, p.ClientSecret)
	}
	return azure.New(c), nil
}
