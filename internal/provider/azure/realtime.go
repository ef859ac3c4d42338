package azure

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/openai"
)

// RealtimeAPIVersion is the api-version of a deployment's Realtime session when the
// configured one is not a preview (the GA data-plane versions have no /realtime).
const RealtimeAPIVersion = "2025-04-01-preview"

var _ llm.Realtimer = (*Client)(nil)

// Realtime opens a Realtime session on the deployment call.Model names: on the v1 API,
// {Endpoint}/openai/v1/realtime?model=DEPLOYMENT; with deployment URLs,
// {Endpoint}/openai/realtime?api-version=...&deployment=DEPLOYMENT, as Azure's SDKs dial
// it. The key goes in api-key (or an Entra ID token as a bearer, by the client's
// transport).
func (c *Client) Realtime(ctx context.Context, call llm.RealtimeCall) (llm.RealtimeConn, error) {
	if c.v1 != nil {
		if rt, ok := c.v1.(llm.Realtimer); ok {
			return rt.Realtime(ctx, call)
		}
	}
	h := http.Header{}
	for k, v := range c.c.Headers {
		h.Set(k, v)
	}
	if c.c.APIKey != "" {
		h.Set("api-key", c.c.APIKey)
	}
	q := url.Values{}
	for k, v := range c.c.Query {
		q.Set(k, v)
	}
	v := c.c.APIVersion
	if !strings.Contains(v, "preview") {
		v = RealtimeAPIVersion
	}
	q.Set("api-version", v)
	q.Set("deployment", call.Model)
	u := c.c.Endpoint + "/openai/realtime?" + q.Encode()
	return openai.DialRealtime(ctx, openai.NewOrigin(c.c.Name, c.c.Scrub), c.c.HTTPClient, u, h, call.Beta)
}
