package gemini

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
)

// Config configures one provider speaking the Gemini wire: the Gemini API with an API key,
// or Vertex AI with OAuth tokens.
type Config struct {
	// Name is the provider's name in the configuration ("gemini"), used in messages.
	Name string
	// BaseURL is the root the model path is appended to ({BaseURL}/models/{model}:
	// streamGenerateContent?alt=sse): "" means the Gemini API,
	// https://generativelanguage.googleapis.com/v1beta; for Vertex, VertexURL.
	BaseURL string
	// APIKey goes in x-goog-api-key (the Gemini API, or Vertex express mode).
	APIKey string
	// Token returns the OAuth access token of a call (Vertex), sent as a bearer token; its
	// failure is the target's Auth failure. Nil sends none.
	Token func(ctx context.Context) (string, error)
	// Headers are extra request headers, set after the adapter's own.
	Headers map[string]string
	// HTTPClient is the client to call with; nil means transport.HTTPClient.
	HTTPClient *http.Client
	// Scrub masks the gateway's credentials in what the upstream writes in its errors.
	Scrub llm.Scrub
}

// DefaultBaseURL is the Gemini API's root.
const DefaultBaseURL = "https://generativelanguage.googleapis.com/v1beta"

// VertexURL is the root of Google's models on Vertex AI in project and location, at
// endpoint ("" means the regional one, https://{location}-aiplatform.googleapis.com, or the
// global one for location "global").
func VertexURL(endpoint, project, location string) string {
	if endpoint == "" {
		endpoint = "https://" + location + "-aiplatform.googleapis.com"
		if location == "global" {
			endpoint = "https://aiplatform.googleapis.com"
		}
	}
	return strings.TrimRight(endpoint, "/") + "/v1/projects/" + url.PathEscape(project) + "/locations/" + url.PathEscape(location) + "/publishers/google"
}

// Client calls one Gemini-wire provider. Safe for concurrent use.
type Client struct {
	origin
	ep    transport.Endpoint
	base  string
	token func(ctx context.Context) (string, error)
}

var _ llm.Provider = (*Client)(nil)

const (
	// maxEvent caps one SSE event: a chunk carries a few parts, but a thought signature or an
	// inline image can be large.
	maxEvent = 16 << 20
)

// New returns a Client for c.
func New(c Config) *Client {
	if c.Name == "" {
		c.Name = "gemini"
	}
	base := strings.TrimRight(c.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	own := map[string]string{}
	if c.APIKey != "" {
		own["X-Goog-Api-Key"] = c.APIKey
	}
	return &Client{origin: origin{name: c.Name, scrub: c.Scrub},
		ep:   transport.NewEndpoint(c.Name, "text/event-stream", own, c.Headers, c.HTTPClient),
		base: base, token: c.Token}
}

// Stream starts a streamGenerateContent call of req: a Gemini client's body (req.Native of
// wire "gemini") as it came, any other request translated. It returns once the upstream answered:
// a request that cannot be translated is an *llm.Error (status 400) and nothing is sent; a
// token that cannot be had is Auth; a non-2xx answer or a connection failure is an
// *llm.Error. The stream is the caller's to Close; canceling ctx aborts it.
func (c *Client) Stream(ctx context.Context, req *llm.Request) (llm.Stream, error) {
	var body []byte
	var err error
	if n := req.Native; n != nil && n.Wire == "gemini" {
		body = n.Body // byte for byte: the model is the path's, not the body's
	} else {
		body, err = encodeRequest(req)
	}
	if err != nil {
		return nil, err
	}
	u := c.base + "/models/" + url.PathEscape(req.Model) + ":streamGenerateContent?alt=sse"
	if req.Plain {
		u = c.base + "/models/" + url.PathEscape(req.Model) + ":generateContent" // the same body, one answer
	}
	hr, err := c.ep.Request(ctx, u, body)
	if err != nil {
		return nil, err
	}
	o, err := c.authorize(ctx, hr)
	if err != nil {
		return nil, err
	}
	if req.Plain {
		res, a, err := c.ep.OpenPlain(ctx, hr)
		switch {
		case err != nil:
			return nil, err
		case a != nil:
			return nil, o.statusError(a.Status, a.Header, a.Body)
		}
		return newPlainStream(ctx, o, max(req.N, 1), res.Body), nil
	}
	res, a, err := c.ep.Open(ctx, hr)
	switch {
	case err != nil:
		return nil, err
	case a != nil && !a.JSON:
		return nil, o.statusError(a.Status, a.Header, a.Body)
	case a != nil:
		// alt=sse ignored, or an error with status 200.
		if st := parseStatus(a.Body); st != nil {
			return nil, o.streamError(st)
		}
		return nil, transport.NotAStream(c.name, a.Status)
	}
	return newStream(ctx, o, max(req.N, 1), res.Body), nil
}

// authorize sets hr's access token (Vertex), if the client has a Token, and returns the
// origin of the answer, whose scrubber also masks the token.
func (c *Client) authorize(ctx context.Context, hr *http.Request) (origin, error) {
	o := c.origin
	if c.token == nil {
		return o, nil
	}
	tok, err := c.token(ctx)
	if err != nil {
		if e := llm.ContextError(ctx); e != nil {
			return o, e
		}
		// DESIGN §10: a token endpoint failure is the target's Auth failure.
		return o, c.scrub.Error(&llm.Error{Kind: llm.Auth, Message: c.name + ": no access token: " + err.Error()})
	}
	hr.Header.Set("Authorization", "Bearer "+tok)
	// The token is not in the configuration, so the gateway's scrubber does not know it.
	o.scrub = func(s string) string {
		if c.scrub != nil {
			s = c.scrub(s)
		}
		return strings.ReplaceAll(s, tok, "[MASKED]")
	}
	return o, nil
}

// Post POSTs body, a JSON document, to u, another Google API of the same credentials
// (Vertex AI's ranking API), and returns its whole 2xx answer, at most limit bytes; another
// status is mapped as for a chat call (google.rpc.Status), scrubbed.
func (c *Client) Post(ctx context.Context, u string, body []byte, limit int64) ([]byte, error) {
	return c.ep.Post(ctx, u, body, limit, func(hr *http.Request) (func(*transport.Answer) error, error) {
		o, err := c.authorize(ctx, hr)
		return func(a *transport.Answer) error { return o.statusError(a.Status, a.Header, a.Body) }, err
	})
}
