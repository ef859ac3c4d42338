// Package retrieval is the adapter of the providers that serve only plain endpoints
// (rerank, embeddings) over HTTPS with a bearer key: Cohere, Jina and Voyage (issue 48).
// It decides how such a call is made and how its failures read: one POST of the client's
// body, translated to the provider's wire by the endpoint's Route, the whole answer
// translated back to the client's wire, a non-2xx answer mapped to an *llm.Error as for a
// chat call, so that the chain falls back the same way. The wires themselves are the
// Routes of each provider's package (provider/cohere, provider/jina, provider/voyage).
package retrieval

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
)

// Route is how a provider serves one plain endpoint of the gateway.
type Route struct {
	// Path is the upstream's path under the base URL ("v2/rerank").
	Path string
	// Request is the upstream's body for the client's body, a JSON object the client wire
	// checked, with model as its model. Its error is the client's: Invalid, status 400.
	Request func(model string, body []byte) ([]byte, error)
	// Answer is the client wire's answer for the upstream's, given the request's model and
	// body too (a wire that drops a member the client asked for puts it back). Its error is
	// the upstream's: Unavailable.
	Answer func(model string, body, out []byte) ([]byte, error)
}

// Config configures one provider.
type Config struct {
	// Name is the provider's name in the configuration, which errors start with.
	Name string
	// BaseURL is where the routes' paths are ("https://api.cohere.com").
	BaseURL string
	// APIKey is sent as a bearer token.
	APIKey string
	// Headers are extra request headers, set last.
	Headers map[string]string
	// Routes are the plain endpoints the provider serves, by the gateway's path
	// (dialect.API.Upstream: "rerank", "embeddings").
	Routes map[string]Route
	// Scrub masks the gateway's credentials in what the upstream writes in its errors.
	Scrub llm.Scrub
	// HTTPClient is the client to call with; nil means transport.HTTPClient.
	HTTPClient *http.Client
}

// Client calls one provider. Safe for concurrent use.
type Client struct {
	base   string
	ep     transport.Endpoint
	routes map[string]Route
	scrub  llm.Scrub
}

var _ llm.Provider = (*Client)(nil)

// MaxAnswer caps an answer held in memory: 1000 documents returned with their text, or
// embeddings of a large batch.
const MaxAnswer = 256 << 20

// New returns a Client for c.
func New(c Config) *Client {
	own := map[string]string{}
	if c.APIKey != "" {
		own["Authorization"] = "Bearer " + c.APIKey
	}
	return &Client{base: strings.TrimRight(c.BaseURL, "/"), routes: c.Routes, scrub: c.Scrub,
		ep: transport.NewEndpoint(c.Name, "application/json", own, c.Headers, c.HTTPClient)}
}

// Serves reports whether the provider serves the plain endpoint path.
func (c *Client) Serves(path string) bool { _, ok := c.routes[path]; return ok }

// Stream implements llm.Provider: the provider serves no chat, and a request for one is the
// client's error (the configuration refuses such a provider as a chat alias's target; a
// client may still name provider/model).
func (c *Client) Stream(context.Context, *llm.Request) (llm.Stream, error) {
	return nil, &llm.Error{Kind: llm.Invalid, Status: http.StatusBadRequest, Type: "invalid_request_error",
		Message: c.ep.Name + " serves no chat, only its plain endpoints (see docs/providers.md)."}
}

// Plain calls the route of path with body, the client's JSON object, model its model, and
// returns the answer in the client's wire. A path the provider does not serve is Invalid; a
// body its wire cannot carry is Invalid (400); a non-2xx answer or a connection failure is
// mapped as for a chat call; a 2xx answer that is not the wire's is Unavailable.
func (c *Client) Plain(ctx context.Context, path, model string, body []byte) ([]byte, error) {
	r, ok := c.routes[path]
	if !ok {
		return nil, NotServed(c.ep.Name, path)
	}
	up, err := r.Request(model, body)
	if err != nil {
		return nil, Refused(c.ep.Name, path, err)
	}
	hr, err := c.ep.Request(ctx, c.base+"/"+r.Path, up)
	if err != nil {
		return nil, err
	}
	out, a, err := c.ep.Call(ctx, hr, MaxAnswer)
	switch {
	case err != nil:
		return nil, c.scrub.Error(asLLM(err))
	case a != nil:
		return nil, c.statusError(a)
	}
	ans, err := r.Answer(model, body, out)
	if err != nil {
		return nil, c.scrub.Error(Malformed(c.ep.Name, path, err))
	}
	return ans, nil
}

// NotServed is the error of a plain call on a path provider name does not serve.
func NotServed(name, path string) *llm.Error {
	return &llm.Error{Kind: llm.Invalid, Status: http.StatusNotFound, Type: "invalid_request_error",
		Message: fmt.Sprintf("%s does not serve %s.", name, path)}
}

// Refused is the error of a plain call whose body the wire of provider name cannot carry:
// the client's (400).
func Refused(name, path string, err error) *llm.Error {
	return &llm.Error{Kind: llm.Invalid, Status: http.StatusBadRequest, Type: "invalid_request_error",
		Message: name + " cannot take this " + path + " request: " + err.Error()}
}

// Malformed is the error of a 2xx answer of provider name that is not its wire's: the
// upstream failing (Unavailable), to be scrubbed by the caller.
func Malformed(name, path string, err error) *llm.Error {
	return &llm.Error{Kind: llm.Unavailable, Status: http.StatusOK,
		Message: name + " answered the " + path + " call with something other than its wire's answer: " + err.Error()}
}

// asLLM is err as an *llm.Error, for scrubbing: transport's errors are.
func asLLM(err error) *llm.Error {
	if e, ok := err.(*llm.Error); ok {
		return e
	}
	return &llm.Error{Kind: llm.KindOf(err), Message: err.Error(), Err: err}
}

// statusError maps a non-2xx answer to an *llm.Error, scrubbed: the kind of its status
// (transport.StatusKind), the upstream's words from its error body (ErrorMessage).
func (c *Client) statusError(a *transport.Answer) *llm.Error {
	kind := transport.StatusKind(a.Status)
	e := transport.StatusError(c.ep.Name, kind, a.Status, fmt.Sprintf("HTTP %d", a.Status),
		transport.ErrorMessage(ErrorMessage(a.Body), a.Body, a.Status), transport.RetryAfter(a.Header, time.Now()))
	if kind == llm.Invalid {
		e.Type = "invalid_request_error"
	}
	return c.scrub.Error(e)
}

// ErrorMessage is the message of an error body in the shapes these providers write: Cohere's
// {"message": ...}, the {"detail": ...} of Jina's and Voyage's (FastAPI) servers, a string
// or a list of {"msg": ...}, and the OpenAI-like {"error": {"message": ...}} or {"error":
// ...} of a proxy before them; "" for none.
func ErrorMessage(body []byte) string {
	var e struct {
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	if e.Message != "" {
		return e.Message
	}
	for _, raw := range []json.RawMessage{e.Detail, e.Error} {
		var s string
		var list []struct {
			Msg string `json:"msg"`
		}
		var obj struct {
			Message string `json:"message"`
		}
		switch {
		case len(raw) == 0:
		case json.Unmarshal(raw, &s) == nil && s != "":
			return s
		case json.Unmarshal(raw, &obj) == nil && obj.Message != "":
			return obj.Message
		case json.Unmarshal(raw, &list) == nil && len(list) > 0:
			msgs := make([]string, 0, len(list))
			for _, m := range list {
				msgs = append(msgs, m.Msg)
			}
			return strings.Join(msgs, "; ")
		}
	}
	return ""
}
