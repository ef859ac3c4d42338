package openai

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"go.opentelemetry.io/otel/propagation"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
)

// Config configures one OpenAI-compatible provider.
type Config struct {
	// Name is the provider's name in the configuration ("openai"), used in messages.
	Name string
	// BaseURL is the API root; "" means https://api.openai.com/v1.
	BaseURL string
	APIKey  string
	// Headers are extra request headers (e.g. Azure's api-key).
	Headers map[string]string
	// Query holds extra query parameters (e.g. api-version).
	Query map[string]string
	// NoStreamOptions leaves stream_options.include_usage out, for servers that reject it.
	NoStreamOptions bool
	// OpenAI says the upstream is OpenAI's own API (kind openai) or Azure OpenAI: it gets the
	// members the gateway derives from what a client of another wire asked (a
	// prompt_cache_key from the conversation key, reasoning_effort from a thinking budget,
	// session.go), which an OpenAI-compatible server may refuse as unknown.
	OpenAI bool
	// HTTPClient is the client to call with; nil means a shared client tuned for a proxy.
	HTTPClient *http.Client
	// Scrub masks the gateway's credentials in what the upstream writes in its errors; nil
	// leaves them as written.
	Scrub llm.Scrub
}

// Client calls one OpenAI-compatible provider's Chat Completions. Safe for concurrent use.
type Client struct {
	conn
	noStreamOptions bool
}

// conn is what the Chat Completions and the Responses adapters share: the provider's name,
// the openai-go client (the reference for every request, and the carrier of the others)
// and the requests it writes for the streamed paths, which post sends directly. Safe for
// concurrent use.
type conn struct {
	origin
	sdk  sdk.Client
	hc   *http.Client
	prep map[string]prepared // by path; read-only after newConn
	// openAI is Config.OpenAI.
	openAI bool
}

// prepared is what openai-go writes for a POST of a JSON body to one path: its URL and
// headers. They do not depend on the body, so post writes them itself: openai-go's request
// path (its options, its middleware chain, its request config and body wrappers) cost
// about as much per call as decoding the whole answer.
type prepared struct {
	url    string
	header http.Header
}

// streamedPaths are the paths post sends directly.
var streamedPaths = []string{"chat/completions", "responses"}

// errPrepared stops the call that prepare runs through openai-go once it wrote the request.
var errPrepared = errors.New("prepared")

var _ llm.Provider = (*Client)(nil)

// maxEvent caps one SSE event: a chunk is small, but a logprobs chunk or a whole tool call
// in one delta can be large.
const maxEvent = 8 << 20

// New returns a Client for c.
func New(c Config) *Client {
	return &Client{conn: newConn(c), noStreamOptions: c.NoStreamOptions}
}

func newConn(c Config) conn {
	if c.Name == "" {
		c.Name = "openai"
	}
	if c.BaseURL == "" {
		c.BaseURL = "https://api.openai.com/v1"
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = transport.HTTPClient
	}
	// The options are built here rather than with sdk.NewClient, which reads OPENAI_API_KEY,
	// OPENAI_BASE_URL and friends from the environment: a provider's configuration must
	// not pick up a key meant for another.
	opts := []option.RequestOption{
		option.WithBaseURL(c.BaseURL),
		option.WithAPIKey(c.APIKey),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0), // retrying belongs to the fallback chain
		option.WithHeader("Accept", "text/event-stream"),
		option.WithMiddleware(captureErrorBody),
		option.WithMiddleware(traceContext),
		option.WithMiddleware(wholeBody),
	}
	for _, k := range slices.Sorted(maps.Keys(c.Headers)) {
		opts = append(opts, option.WithHeader(k, c.Headers[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(c.Query)) {
		opts = append(opts, option.WithQuery(k, c.Query[k]))
	}
	cn := conn{origin: origin{name: c.Name, scrub: c.Scrub}, sdk: sdk.Client{Options: opts}, hc: hc,
		prep: map[string]prepared{}, openAI: c.OpenAI}
	for _, path := range append(streamedPaths, "realtime") { // realtime: the URL and headers of a Realtime dial
		if p, ok := cn.prepare(path); ok {
			cn.prep[path] = p
		}
	}
	return cn
}

// prepare has openai-go write the request of a POST to path, stops it before it is sent,
// and keeps its URL and headers (without the trace headers, which are the call's).
func (c *conn) prepare(path string) (prepared, bool) {
	var p prepared
	capture := func(req *http.Request, _ option.MiddlewareNext) (*http.Response, error) {
		p = prepared{url: req.URL.String(), header: req.Header.Clone()}
		return nil, errPrepared
	}
	var res *http.Response
	err := c.sdk.Post(context.Background(), path, nil, &res, option.WithRequestBody("application/json", []byte("{}")),
		option.WithMiddleware(capture))
	if !errors.Is(err, errPrepared) || p.header == nil {
		return prepared{}, false
	}
	for _, k := range (propagation.TraceContext{}).Fields() {
		p.header.Del(k)
	}
	return p, true
}

// Stream starts a streamed Chat Completions call of req. It returns once the upstream
// answered: a non-2xx answer or a connection failure is an *llm.Error (Target left for the
// caller to set). The stream is the caller's to Close; canceling ctx aborts it.
func (c *Client) Stream(ctx context.Context, req *llm.Request) (llm.Stream, error) {
	if e := req.NativeOnly("openai"); e != nil {
		return nil, e // a server tool or a PDF of an Anthropic client: another target may take it
	}
	body, err := encodeRequest(c.derive(req), !c.noStreamOptions)
	if err != nil {
		return nil, err
	}
	if req.Plain {
		res, err := c.send(ctx, "chat/completions", body, true)
		if err != nil {
			return nil, c.callError(ctx, err)
		}
		return newPlainStream(ctx, c.origin, res.Body), nil
	}
	rc, err := c.post(ctx, "chat/completions", body)
	if err != nil {
		return nil, err
	}
	return newStream(ctx, c.origin, rc), nil
}

// post sends body to path and returns the event stream's body, the caller's to close. A
// non-2xx answer, a connection failure, or a JSON answer instead of a stream is an
// *llm.Error.
func (c *conn) post(ctx context.Context, path string, body []byte) (io.ReadCloser, error) {
	res, err := c.send(ctx, path, body, false)
	if err != nil {
		return nil, c.callError(ctx, err)
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt == "application/json" {
		// The server ignored stream: true, or sent an error with status 200.
		b, _ := io.ReadAll(io.LimitReader(res.Body, transport.MaxErrorBody))
		res.Body.Close()
		if e := parseErrorBody(b); e.Message != "" {
			return nil, c.inStreamError(e)
		}
		return nil, transport.NotAStream(c.name, res.StatusCode)
	}
	return res.Body, nil
}

// send POSTs body to path: the request openai-go writes (TestDirectRequest), written here
// when prepared, else by openai-go. A non-2xx answer is a *statusError.
func (c *conn) send(ctx context.Context, path string, body []byte, plain bool) (*http.Response, error) {
	p, ok := c.prep[path]
	accept := "text/event-stream"
	if plain {
		accept = "application/json"
	}
	if !ok {
		var res *http.Response
		// Passing **http.Response as the result makes openai-go hand over the response with
		// its body unread (requestconfig: "A pointer to a [*http.Response] is populated by the
		// raw response"); non-2xx answers never get there: captureErrorBody turns them into
		// a *statusError first.
		err := c.sdk.Post(ctx, path, nil, &res, option.WithRequestBody("application/json", body), option.WithHeader("Accept", accept))
		if err != nil && res != nil && res.Body != nil {
			res.Body.Close()
		}
		return res, err
	}
	// A bytes.Reader: net/http writes the headers and the body in one packet
	// (transfer.go: isKnownInMemoryReader) and sets GetBody.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = p.header.Clone()
	if plain {
		req.Header.Set("Accept", accept)
	}
	return captureErrorBody(req, func(req *http.Request) (*http.Response, error) {
		return traceContext(req, c.hc.Do)
	})
}

// statusError is a non-2xx answer, with at most transport.MaxErrorBody bytes of its body.
type statusError struct {
	status int
	header http.Header
	body   []byte
}

func (e *statusError) Error() string { return http.StatusText(e.status) }

// captureErrorBody reads a non-2xx body with a cap and returns it as an error: openai-go
// would read it whole, and its error type may keep a message that echoes the key.
func captureErrorBody(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res.StatusCode >= 200 && res.StatusCode < 300 {
		return res, err
	}
	b, _ := io.ReadAll(io.LimitReader(res.Body, transport.MaxErrorBody))
	res.Body.Close()
	return nil, &statusError{status: res.StatusCode, header: res.Header, body: b}
}

// wholeBody hands the transport the request's body as the in-memory reader it is. openai-go
// wraps it in a type net/http does not recognise, and net/http then writes the headers in
// a packet of their own ahead of the body (transfer.go: isKnownInMemoryReader): a second
// write here and a second read upstream on every call.
func wholeBody(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	if req.GetBody != nil {
		if b, err := req.GetBody(); err == nil {
			req.Body = b
		}
	}
	return next(req)
}

// callError maps a failed call to an *llm.Error.
func (c *conn) callError(ctx context.Context, err error) error {
	if e := llm.ContextError(ctx); e != nil {
		return e
	}
	var se *statusError
	if errors.As(err, &se) {
		return c.statusError(se)
	}
	var le *llm.Error
	if errors.As(err, &le) {
		return le
	}
	return transport.Error(ctx, c.name, err)
}
