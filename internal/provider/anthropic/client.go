package anthropic

import (
	"context"
	"net/http"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
)

// Config configures one Anthropic Messages provider.
type Config struct {
	// Name is the provider's name in the configuration ("anthropic"), used in messages.
	Name string
	// BaseURL is the API root without /v1; "" means https://api.anthropic.com. The adapter
	// calls BaseURL + "/v1/messages" (a trailing "/v1" given by mistake is dropped).
	BaseURL string
	// APIKey goes in x-api-key; "" sends none (a proxy that authenticates by Headers).
	APIKey string
	// Version is the anthropic-version header; "" means DefaultVersion.
	Version string
	// Headers are extra request headers (e.g. anthropic-beta), set after the adapter's own,
	// so they may override them.
	Headers map[string]string
	// HTTPClient is the client to call with; nil means a shared client tuned for a proxy.
	HTTPClient *http.Client
	// DefaultMaxTokens gives max_tokens for a model when the request names none (the
	// Messages API requires it); nil, or a result <= 0, means ModelMaxTokens.
	DefaultMaxTokens func(model string) int
	// Scrub masks the gateway's credentials in what the upstream writes in its errors; nil
	// leaves them as written.
	Scrub llm.Scrub
}

// DefaultVersion is the anthropic-version sent when Config.Version is empty.
const DefaultVersion = "2023-06-01"

// Client calls one Anthropic Messages provider. Safe for concurrent use.
type Client struct {
	origin
	ep        transport.Endpoint
	url       string
	maxTokens func(model string) int
}

var _ llm.Provider = (*Client)(nil)

// maxEvent caps one SSE event. Anthropic events are small deltas, but a content_block_start
// may carry a whole block (server tool results, a redacted thinking block).
const maxEvent = 16 << 20

// New returns a Client for c.
func New(c Config) *Client {
	if c.Name == "" {
		c.Name = "anthropic"
	}
	base := strings.TrimRight(c.BaseURL, "/")
	base = strings.TrimSuffix(base, "/v1")
	if base == "" {
		base = "https://api.anthropic.com"
	}
	if c.Version == "" {
		c.Version = DefaultVersion
	}
	own := map[string]string{"Anthropic-Version": c.Version}
	if c.APIKey != "" {
		own["X-Api-Key"] = c.APIKey
	}
	return &Client{origin: origin{name: c.Name, scrub: c.Scrub},
		ep:  transport.NewEndpoint(c.Name, "text/event-stream", own, c.Headers, c.HTTPClient),
		url: base + "/v1/messages", maxTokens: c.DefaultMaxTokens}
}

// Stream starts a streamed Messages call of req. It returns once the upstream answered: a
// request that cannot be translated is an Invalid *llm.Error (status 400) and nothing is
// sent; a non-2xx answer or a connection failure is an *llm.Error (Target left for the
// caller to set). The stream is the caller's to Close; canceling ctx aborts it.
func (c *Client) Stream(ctx context.Context, req *llm.Request) (llm.Stream, error) {
	var body []byte
	var dropped int // breakpoints left out, reported in the usage
	var err error
	if n := req.Native; n != nil && n.Wire == "anthropic" {
		body, dropped, err = nativeBody(n.Body, req.Model)
	} else {
		body, dropped, err = encodeRequest(req, c.defaultMaxTokens(req.Model))
	}
	if err != nil {
		return nil, err
	}
	hr, err := c.ep.Request(ctx, c.url, body)
	if err != nil {
		return nil, err
	}
	if req.Plain && req.Native == nil {
		res, a, err := c.ep.OpenPlain(ctx, hr)
		switch {
		case err != nil:
			return nil, err
		case a != nil:
			return nil, c.statusError(a.Status, a.Header, a.Body)
		}
		return newPlainStream(ctx, c.origin, res.Body, dropped), nil
	}
	if n := req.Native; n != nil && n.Wire == "anthropic" {
		for k, v := range n.Header { // the client's anthropic-version and anthropic-beta
			hr.Header.Set(k, v)
		}
	}
	res, a, err := c.ep.Open(ctx, hr)
	switch {
	case err != nil:
		return nil, err
	case a != nil && !a.JSON:
		return nil, c.statusError(a.Status, a.Header, a.Body)
	case a != nil:
		// The server ignored stream: true, or sent an error with status 200.
		if we := parseErrorBody(a.Body); we.Type != "" || we.Message != "" {
			return nil, c.streamError(we)
		}
		return nil, transport.NotAStream(c.name, a.Status)
	}
	s := newStream(ctx, c.origin, res.Body)
	s.msg.dropped = dropped
	return s, nil
}

func (c *Client) defaultMaxTokens(model string) int {
	if c.maxTokens != nil {
		if n := c.maxTokens(model); n > 0 {
			return n
		}
	}
	return ModelMaxTokens(model)
}
