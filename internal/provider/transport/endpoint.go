package transport

import (
	"bytes"
	"context"
	"maps"
	"net/http"
	"slices"

	"go.opentelemetry.io/otel/propagation"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Endpoint is how an HTTP adapter reaches its provider: the provider's name, which errors
// start with, the headers every call carries, and the client it calls with. Built once by
// NewEndpoint and read-only afterwards: safe for concurrent use.
type Endpoint struct {
	Name   string
	Header http.Header
	Client *http.Client
}

// NewEndpoint is provider name's endpoint. Every call sends a JSON body and asks for accept
// (the wire's event stream); own are the adapter's other headers (its version, its key),
// extra the configuration's, set last so that they may override the adapter's. hc nil
// means HTTPClient, the shared pool.
func NewEndpoint(name, accept string, own, extra map[string]string, hc *http.Client) Endpoint {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", accept)
	for _, m := range []map[string]string{own, extra} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			h.Set(k, m[k])
		}
	}
	if hc == nil {
		hc = HTTPClient
	}
	return Endpoint{Name: name, Header: h, Client: hc}
}

// Request is a POST of body to url with the endpoint's headers (a copy, the caller's to
// add to) and the call's trace: the W3C traceparent (DESIGN §7), so that the provider's
// spans, if it records any, join the caller's trace; never baggage, which is the client's
// business and not the provider's. A request that cannot be built is Internal.
func (e Endpoint) Request(ctx context.Context, url string, body []byte) (*http.Request, error) {
	// A bytes.Reader: net/http writes the headers and the body in one packet
	// (transfer.go: isKnownInMemoryReader) and sets GetBody.
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, &llm.Error{Kind: llm.Internal, Message: e.Name + ": cannot build the request", Err: err}
	}
	hr.Header = e.Header.Clone()
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(hr.Header))
	return hr, nil
}

// Open is Open on the endpoint's client.
func (e Endpoint) Open(ctx context.Context, hr *http.Request) (*http.Response, *Answer, error) {
	return Open(ctx, e.Client, e.Name, hr)
}

// OpenPlain is Open for a non-streamed call (llm.Request.Plain): it asks for JSON and returns
// any 2xx response, whose body the caller reads whole (Body.ReadAll); another status is its
// Answer.
func (e Endpoint) OpenPlain(ctx context.Context, hr *http.Request) (*http.Response, *Answer, error) {
	hr.Header.Set("Accept", "application/json")
	return do(ctx, e.Client, e.Name, hr)
}

// NotAStream is the error for a 2xx JSON answer of provider name that carries no error
// the wire knows: a server that ignored stream: true.
func NotAStream(name string, status int) *llm.Error {
	return &llm.Error{Kind: llm.Unavailable, Status: status, Message: name + " answered with JSON, not an event stream"}
}
