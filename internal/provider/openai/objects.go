package openai

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3/option"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
)

var _ llm.ObjectHost = (*Client)(nil)

// Object implements llm.ObjectHost: OpenAI's /files and /batches, passed through. openai-go
// writes the call's URL and headers (the base URL, the key, the configuration's headers
// and query: Azure's api-key and api-version), as for the chat calls; the body is sent
// streamed, never read whole. A non-2xx answer is the call's *llm.Error, scrubbed.
func (c *conn) Object(ctx context.Context, call llm.ObjectCall) (*llm.ObjectAnswer, error) {
	base, header, err := c.objectBase(call.Method)
	if err != nil {
		return nil, err
	}
	return transport.DoObject(ctx, c.hc, c.name, base, header, call, func(a *transport.Answer) *llm.Error {
		return c.statusError(&statusError{status: a.Status, header: a.Header, body: a.Body})
	})
}

// objectMark is the path openai-go is asked to write, to learn the API root's URL.
const objectMark = "sluice-object-root"

// objectBase has openai-go write a request of method and keeps its URL's root (the query,
// Azure's api-version, stays on it) and its headers, without sending it.
func (c *conn) objectBase(method string) (*url.URL, http.Header, error) {
	var base *url.URL
	var header http.Header
	capture := func(req *http.Request, _ option.MiddlewareNext) (*http.Response, error) {
		u := *req.URL
		u.Path, u.RawPath = strings.TrimSuffix(u.Path, "/"+objectMark), ""
		base, header = &u, req.Header.Clone()
		return nil, errPrepared
	}
	var res *http.Response
	err := c.sdk.Execute(context.Background(), method, objectMark, nil, &res, option.WithMiddleware(capture))
	if !errors.Is(err, errPrepared) || header == nil {
		return nil, nil, &llm.Error{Kind: llm.Internal, Message: c.name + ": cannot build the request", Err: err}
	}
	return base, header, nil
}
