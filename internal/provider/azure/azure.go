package azure

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/openai"
	"github.com/sluice-gw/sluice/internal/provider/transport"
)

// DefaultAPIVersion is the api-version of deployment URLs when the configuration names none:
// the latest GA data-plane version at the time of writing.
const DefaultAPIVersion = "2024-10-21"

// Config configures one Azure OpenAI provider.
type Config struct {
	// Name is the provider's name in the configuration ("azure"), used in messages.
	Name string
	// Endpoint is the resource's endpoint, https://{resource}.openai.azure.com (a trailing
	// /openai/v1 is accepted).
	Endpoint string
	// Deployments calls deployment URLs, {Endpoint}/openai/deployments/{model}/... with
	// api-version, the target's model naming the deployment; false calls the v1 API,
	// {Endpoint}/openai/v1/..., whose body names the model (or deployment).
	Deployments bool
	// APIVersion is the api-version of deployment URLs; "" means DefaultAPIVersion.
	APIVersion string
	// Responses calls the Responses API instead of Chat Completions (v1 API only).
	Responses bool
	// APIKey goes in the api-key header.
	APIKey string
	// Token returns a Microsoft Entra ID access token for each call, sent as a bearer token
	// instead of an api-key; its failure is the target's Auth failure.
	Token func(ctx context.Context) (string, error)
	// Headers and Query are added to every call.
	Headers map[string]string
	Query   map[string]string
	// NoStreamOptions leaves stream_options out, for API versions that reject it.
	NoStreamOptions bool
	// HTTPClient is the client to call with; nil means transport.HTTPClient.
	HTTPClient *http.Client
	// Scrub masks the gateway's credentials in what the upstream writes in its errors.
	Scrub llm.Scrub
}

// Client calls one Azure OpenAI resource through the openai adapter, configured for it.
// Safe for concurrent use.
type Client struct {
	c  Config
	v1 llm.Provider // the v1 API's one client; nil with Deployments
	// objects serves the files and batches (llm.ObjectHost): the v1 API's /openai/v1/files
	// and /openai/v1/batches, or with Deployments /openai/files?api-version=...
	objects llm.ObjectHost

	mu   sync.Mutex
	deps map[string]llm.Provider // a client per deployment, made at its first call
}

var _ llm.Provider = (*Client)(nil)

// New returns a Client for c.
func New(c Config) *Client {
	if c.Name == "" {
		c.Name = "azure"
	}
	c.Endpoint = strings.TrimSuffix(strings.TrimRight(c.Endpoint, "/"), "/openai/v1")
	if c.APIVersion == "" {
		c.APIVersion = DefaultAPIVersion
	}
	if c.HTTPClient == nil {
		c.HTTPClient = transport.HTTPClient
	}
	if c.Token != nil {
		// The openai adapter sends a static key: a fresh token per call goes in by the
		// client's transport instead, which also masks it in the upstream's errors.
		base := c.HTTPClient
		c.HTTPClient = &http.Client{Transport: bearer{base: base.Transport, token: c.Token, name: c.Name}}
		scrub := c.Scrub
		c.Scrub = func(s string) string {
			if scrub != nil {
				s = scrub(s)
			}
			return transport.MaskBearer(s)
		}
	}
	cl := &Client{c: c, deps: map[string]llm.Provider{}}
	if !c.Deployments {
		cl.v1 = cl.provider(c.Endpoint+"/openai/v1", false)
		cl.objects = cl.v1.(llm.ObjectHost)
	} else {
		cl.objects = cl.provider(c.Endpoint+"/openai", true).(llm.ObjectHost)
	}
	return cl
}

var _ llm.ObjectHost = (*Client)(nil)

// Object implements llm.ObjectHost: Azure OpenAI's files and batches, through the openai
// adapter (the api-key or the Entra ID token, the configuration's headers and query).
func (c *Client) Object(ctx context.Context, call llm.ObjectCall) (*llm.ObjectAnswer, error) {
	return c.objects.Object(ctx, call)
}

// provider is an openai adapter for base; versioned adds api-version.
func (c *Client) provider(base string, versioned bool) llm.Provider {
	headers := map[string]string{}
	for k, v := range c.c.Headers {
		headers[k] = v
	}
	if c.c.APIKey != "" {
		headers["api-key"] = c.c.APIKey
	}
	query := map[string]string{}
	for k, v := range c.c.Query {
		query[k] = v
	}
	if versioned {
		query["api-version"] = c.c.APIVersion
	}
	oc := openai.Config{Name: c.c.Name, BaseURL: base, Headers: headers, Query: query,
		NoStreamOptions: c.c.NoStreamOptions, HTTPClient: c.c.HTTPClient, Scrub: c.c.Scrub,
		OpenAI: true} // Azure OpenAI takes prompt_cache_key and reasoning_effort as OpenAI does
	if c.c.Responses && !versioned {
		return openai.NewResponses(oc)
	}
	return openai.New(oc)
}

// Stream starts a streamed call of req: on the v1 API, or on the deployment req.Model
// names. A request the content filter refused is Refused (status 400, code content_filter):
// the provider's own guardrail, which the chain does not route around.
func (c *Client) Stream(ctx context.Context, req *llm.Request) (llm.Stream, error) {
	p := c.v1
	if p == nil {
		c.mu.Lock()
		if p = c.deps[req.Model]; p == nil {
			p = c.provider(c.c.Endpoint+"/openai/deployments/"+url.PathEscape(req.Model), true)
			c.deps[req.Model] = p
		}
		c.mu.Unlock()
	}
	s, err := p.Stream(ctx, req)
	if err != nil {
		return nil, contentFilter(err)
	}
	return &stream{Stream: s, model: req.Model}, nil
}

// stream names the answer's model when the upstream's first chunk did not: Azure opens
// with a prompt_filter_results chunk whose id and model are empty, which the openai adapter
// takes for the answer's start.
type stream struct {
	llm.Stream
	model string
}

func (s *stream) Recv() (llm.Event, error) {
	ev, err := s.Stream.Recv()
	if ev.Type == llm.EvStart && ev.Model == "" {
		ev.Model = s.model
	}
	return ev, err
}

// BeforeWait implements llm.Waiter for the openai adapter's stream, which is one.
func (s *stream) BeforeWait(f func()) {
	if w, ok := s.Stream.(llm.Waiter); ok {
		w.BeforeWait(f)
	}
}

var _ llm.Waiter = (*stream)(nil)

// contentFilter turns Azure's 400 content_filter (the prompt tripped the deployment's
// content filtering) into a Refused error, keeping its status, code and message.
func contentFilter(err error) error {
	var le *llm.Error
	if errors.As(err, &le) && le.Kind == llm.Invalid && le.Code == "content_filter" {
		e := *le
		e.Kind = llm.Refused
		return &e
	}
	return err
}

// bearer sets each call's Entra ID token. A token that cannot be had is an Auth *llm.Error,
// which the openai adapter passes on as it is.
type bearer struct {
	base  http.RoundTripper
	token func(ctx context.Context) (string, error)
	name  string
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	tok, err := b.token(r.Context())
	if err != nil {
		if r.Body != nil {
			r.Body.Close()
		}
		if e := llm.ContextError(r.Context()); e != nil {
			return nil, e
		}
		return nil, &llm.Error{Kind: llm.Auth, Message: b.name + ": no Entra ID token: " + transport.MaskBearer(err.Error())}
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+tok)
	base := b.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}
