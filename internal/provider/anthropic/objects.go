package anthropic

import (
	"context"
	"net/url"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
)

var _ llm.ObjectHost = (*Client)(nil)

// Object implements llm.ObjectHost: Anthropic's /v1/messages/batches (create, list, get,
// cancel, results, delete), passed through with the adapter's x-api-key, anthropic-version
// and the configuration's headers. The body is sent streamed; a non-2xx answer is the
// call's *llm.Error, scrubbed.
func (c *Client) Object(ctx context.Context, call llm.ObjectCall) (*llm.ObjectAnswer, error) {
	base, err := url.Parse(c.url[:len(c.url)-len("/messages")]) // BaseURL + "/v1"
	if err != nil {
		return nil, &llm.Error{Kind: llm.Internal, Message: c.name + ": cannot build the request", Err: err}
	}
	return transport.DoObject(ctx, c.ep.Client, c.name, base, c.ep.Header, call, func(a *transport.Answer) *llm.Error {
		return c.statusError(a.Status, a.Header, a.Body)
	})
}
