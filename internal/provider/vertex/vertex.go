// Package vertex is the adapter for Vertex AI: Google's models through the Gemini wire
// (provider/gemini, publishers/google/models/{model}:streamGenerateContent) and Anthropic's
// models through the Anthropic wire (provider/anthropic, publishers/anthropic/models/{model}:
// streamRawPredict), one OAuth token for both. It decides which publisher a model is (a
// Claude model id, "claude-..." with its "@version", is Anthropic's; any other is Google's)
// and how a Messages call becomes a rawPredict call: the model moves from the body to the
// URL, the body carries anthropic_version vertex-2023-10-16, and the bearer token replaces
// x-api-key and anthropic-version. Everything else is those adapters' (their translation
// tables hold); they are configured, not changed. The gateway's plain endpoint rerank is
// served with Discovery Engine's ranking API, with the same token (Plain, rank.go);
// embeddings and image generation with the models' predict method (embed.go, image.go).
package vertex

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/anthropic"
	"github.com/sluice-gw/sluice/internal/provider/gemini"
	"github.com/sluice-gw/sluice/internal/provider/transport"
)

// AnthropicVersion is the anthropic_version Vertex AI's Claude models take in the body.
const AnthropicVersion = "vertex-2023-10-16"

// Config configures one Vertex AI provider.
type Config struct {
	// Name is the provider's name in the configuration ("vertex"), used in messages.
	Name string
	// Endpoint, Project and Location name the API root (gemini.VertexURL; "" endpoint: the
	// regional or global one). An Endpoint set is the ranking API's root too (a proxy or a
	// test serving both), else it is discoveryengine.googleapis.com, location global.
	Endpoint, Project, Location string
	// Token returns the OAuth access token of a call (gemini.VertexCredentials).
	Token func(ctx context.Context) (string, error)
	// Headers are extra request headers.
	Headers map[string]string
	// HTTPClient is the client to call with; nil means transport.HTTPClient.
	HTTPClient *http.Client
	// Scrub masks the gateway's credentials in what the upstream writes in its errors.
	Scrub llm.Scrub
}

// Client calls one Vertex AI project and location. Safe for concurrent use.
type Client struct {
	name     string
	token    func(ctx context.Context) (string, error)
	google   *gemini.Client
	claude   *anthropic.Client
	project  string
	root     string // .../publishers/google, of the embedding models (Plain)
	rankRoot string // the ranking API's endpoint (Plain)
	scrub    llm.Scrub
}

var _ llm.Provider = (*Client)(nil)

// New returns a Client for c.
func New(c Config) *Client {
	if c.Name == "" {
		c.Name = "vertex"
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = transport.HTTPClient
	}
	root := gemini.VertexURL(c.Endpoint, c.Project, c.Location) // .../publishers/google
	anthropicRoot := strings.TrimSuffix(root, "/google") + "/anthropic"
	// The Messages call's token comes from its context (Stream gets it first, so that its
	// failure is Auth): the transport only moves it into the request.
	rp := &http.Client{Transport: rawPredict{base: hc.Transport, root: anthropicRoot}}
	return &Client{name: c.Name, token: c.Token, project: c.Project, root: root, rankRoot: cmp.Or(c.Endpoint, rankRoot), scrub: c.Scrub,
		google: gemini.New(gemini.Config{Name: c.Name, BaseURL: root, Token: c.Token, Headers: c.Headers, HTTPClient: hc, Scrub: c.Scrub}),
		claude: anthropic.New(anthropic.Config{Name: c.Name, BaseURL: "http://vertex.invalid", Headers: c.Headers, HTTPClient: rp,
			Scrub: masking(c.Scrub)})}
}

// Claude reports whether a Vertex model id is one of Anthropic's (claude-sonnet-4-5@20250929).
func Claude(model string) bool { return strings.HasPrefix(model, "claude-") }

// Stream starts a streamed call of req on the publisher its model belongs to.
func (c *Client) Stream(ctx context.Context, req *llm.Request) (llm.Stream, error) {
	if !Claude(req.Model) {
		return c.google.Stream(ctx, req)
	}
	tok := ""
	if c.token != nil {
		var err error
		if tok, err = c.token(ctx); err != nil {
			if e := llm.ContextError(ctx); e != nil {
				return nil, e
			}
			return nil, &llm.Error{Kind: llm.Auth, Message: c.name + ": no access token: " + err.Error()}
		}
	}
	return c.claude.Stream(context.WithValue(ctx, tokenKey{}, tok), req)
}

type tokenKey struct{}

// rawPredict turns the Anthropic adapter's Messages call into Vertex AI's streamRawPredict,
// or rawPredict for a call that does not stream (upstream: plain).
type rawPredict struct {
	base http.RoundTripper
	root string // .../publishers/anthropic
}

func (rp rawPredict) RoundTrip(r *http.Request) (*http.Response, error) {
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(b, &body); err != nil {
		return nil, err
	}
	var model string
	json.Unmarshal(body["model"], &model)
	delete(body, "model")
	body["anthropic_version"] = json.RawMessage(strconv.Quote(AnthropicVersion))
	if b, err = json.Marshal(body); err != nil {
		return nil, err
	}
	method := ":rawPredict"
	if string(body["stream"]) == "true" {
		method = ":streamRawPredict"
	}
	u, err := url.Parse(rp.root + "/models/" + url.PathEscape(model) + method)
	if err != nil {
		return nil, err
	}
	out := r.Clone(r.Context())
	out.URL, out.Host = u, u.Host
	out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	out.Header.Del("X-Api-Key")
	out.Header.Del("Anthropic-Version")
	if tok, _ := r.Context().Value(tokenKey{}).(string); tok != "" {
		out.Header.Set("Authorization", "Bearer "+tok)
	}
	base := rp.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(out)
}

// masking masks a bearer token an upstream quotes, after scrub.
func masking(scrub llm.Scrub) llm.Scrub {
	return func(s string) string {
		if scrub != nil {
			s = scrub(s)
		}
		return transport.MaskBearer(s)
	}
}
