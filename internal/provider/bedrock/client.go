package bedrock

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
)

// Config configures one Bedrock Runtime provider.
type Config struct {
	// Name is the provider's name in the configuration ("bedrock"), used in messages.
	Name string
	// Region is the AWS region (us-east-1); it names the endpoint and the signing scope.
	Region string
	// BaseURL overrides the endpoint, https://bedrock-runtime.{Region}.amazonaws.com (a VPC
	// endpoint, a proxy, a test). The adapter calls BaseURL + "/model/{id}/converse-stream",
	// and BaseURL + "/rerank" for the Rerank API, else on
	// https://bedrock-agent-runtime.{Region}.amazonaws.com.
	BaseURL string
	// APIKey is a Bedrock API key, sent as a bearer token instead of a SigV4 signature.
	APIKey string
	// Credentials sign the calls (SigV4, service "bedrock") when APIKey is empty: the
	// default chain (LoadCredentials), or static ones. Nil with no APIKey sends unsigned
	// calls, which Bedrock refuses (a proxy that signs may want that).
	Credentials aws.CredentialsProvider
	// Headers are extra request headers, set before signing.
	Headers map[string]string
	// HTTPClient is the client to call with; nil means transport.HTTPClient.
	HTTPClient *http.Client
	// Scrub masks the gateway's credentials in what the upstream writes in its errors.
	Scrub llm.Scrub
	// CachePoints puts a cachePoint block after the system prompt and after the tools, the
	// prefix that stays the same from call to call, for models with prompt caching, when
	// the client marked no block itself (the client's marks say where otherwise).
	CachePoints bool
	// Now is the clock of the signatures; nil means time.Now.
	Now func() time.Time
}

// Client calls one Bedrock Runtime provider. Safe for concurrent use.
type Client struct {
	origin
	base   string
	region string
	bearer string
	creds  aws.CredentialsProvider
	ep     transport.Endpoint
	agent  string             // the Agents runtime's endpoint (Rerank)
	plain  transport.Endpoint // its JSON calls
	signer *v4.Signer
	now    func() time.Time
	cache  bool
}

var _ llm.Provider = (*Client)(nil)

// signingName is Bedrock Runtime's SigV4 service name (the endpoint's is bedrock-runtime).
const signingName = "bedrock"

// New returns a Client for c.
func New(c Config) *Client {
	if c.Name == "" {
		c.Name = "bedrock"
	}
	base := strings.TrimRight(c.BaseURL, "/")
	agent := base
	if base == "" {
		base = "https://bedrock-runtime." + c.Region + ".amazonaws.com"
		agent = "https://bedrock-agent-runtime." + c.Region + ".amazonaws.com"
	}
	now := c.Now
	if now == nil {
		now = time.Now
	}
	return &Client{origin: origin{name: c.Name, scrub: c.Scrub}, base: base, region: c.Region,
		bearer: c.APIKey, creds: c.Credentials,
		ep: transport.NewEndpoint(c.Name, "application/vnd.amazon.eventstream", nil, c.Headers, c.HTTPClient), signer: v4.NewSigner(), now: now, cache: c.CachePoints,
		agent: agent, plain: transport.NewEndpoint(c.Name, "application/json", nil, c.Headers, c.HTTPClient)}
}

// Stream starts a ConverseStream call of req. It returns once the upstream answered: a
// request that cannot be translated is an *llm.Error (status 400) and nothing is sent;
// credentials that cannot be had are Auth; a non-2xx answer or a connection failure is an
// *llm.Error. The stream is the caller's to Close; canceling ctx aborts it.
func (c *Client) Stream(ctx context.Context, req *llm.Request) (llm.Stream, error) {
	body, dropped, err := encodeRequest(req, c.cache)
	if err != nil {
		return nil, err
	}
	u := c.base + "/model/" + escapeLabel(req.Model) + "/converse-stream"
	if req.Plain {
		u = c.base + "/model/" + escapeLabel(req.Model) + "/converse" // the same body, one answer
	}
	hr, err := c.ep.Request(ctx, u, body) // the trace headers are signed too
	if err != nil {
		return nil, err
	}
	if req.Plain {
		hr.Header.Set("Accept", "application/json") // before signing: OpenPlain sets the same
	}
	o, err := c.authorize(ctx, hr, body)
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
		return newPlainStream(ctx, o, res.Header.Get("X-Amzn-Requestid"), req.Model, dropped, res.Body), nil
	}
	res, a, err := c.ep.Open(ctx, hr)
	switch {
	case err != nil:
		return nil, err
	case a != nil && !a.JSON:
		return nil, o.statusError(a.Status, a.Header, a.Body)
	case a != nil: // JSON with a 2xx: not the event stream asked for
		return nil, o.statusError(http.StatusBadGateway, a.Header, a.Body)
	}
	s := newStream(ctx, o, res.Header.Get("X-Amzn-Requestid"), req.Model, res.Body)
	s.msg.dropped = dropped
	return s, nil
}

// authorize signs hr (SigV4 over the body's hash) or sets the bearer API key, and returns
// the origin of the answer, whose scrubber also masks the credentials it signed with. A credential
// provider that fails (no source, an STS refusal, a metadata service that does not answer)
// is the target's Auth failure, never the client's; its text may name a profile or a
// role, not a secret, and is scrubbed anyway.
func (c *Client) authorize(ctx context.Context, hr *http.Request, body []byte) (origin, error) {
	if c.bearer != "" {
		hr.Header.Set("Authorization", "Bearer "+c.bearer)
		return c.origin, nil
	}
	if c.creds == nil {
		return c.origin, nil
	}
	creds, err := c.creds.Retrieve(ctx)
	if err != nil {
		if e := llm.ContextError(ctx); e != nil {
			return c.origin, e
		}
		return c.origin, c.scrub.Error(&llm.Error{Kind: llm.Auth, Message: c.name + ": no AWS credentials: " + err.Error()})
	}
	sum := sha256.Sum256(body)
	if err := c.signer.SignHTTP(ctx, creds, hr, hex.EncodeToString(sum[:]), signingName, c.region, c.now()); err != nil {
		return c.origin, &llm.Error{Kind: llm.Internal, Message: c.name + ": cannot sign the request", Err: err}
	}
	// The chain's credentials are not in the configuration, so the gateway's scrubber does
	// not know them: the session token travels in a header a proxy may quote back.
	o := c.origin
	o.scrub = func(s string) string {
		if c.scrub != nil {
			s = c.scrub(s)
		}
		for _, v := range []string{creds.SessionToken, creds.SecretAccessKey} {
			if v != "" {
				s = strings.ReplaceAll(s, v, "[MASKED]")
			}
		}
		return s
	}
	return o, nil
}

// escapeLabel escapes a model id as one path segment, as the SDK escapes its URI labels:
// every byte but the unreserved ones (RFC 3986), so that an inference profile ARN
// (arn:aws:bedrock:us-east-1:123:inference-profile/us.anthropic.claude-...) stays one
// segment and signs the way Bedrock checks it.
func escapeLabel(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}
