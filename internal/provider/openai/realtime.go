package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"

	"github.com/coder/websocket"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
)

// realtimeReadLimit bounds one upstream Realtime event: a response.done holds the whole
// response, audio deltas are base64.
const realtimeReadLimit = 16 << 20

var (
	_ llm.Realtimer = (*Client)(nil)
	_ llm.Realtimer = (*Responses)(nil)
)

// Realtime opens a Realtime session with the provider: a WebSocket to {base}/realtime?model=
// (wss://api.openai.com/v1/realtime), with the provider's key and headers, and the client's
// OpenAI-Beta (the beta shape of the events) when it sent one. A refused handshake is an
// *llm.Error with the upstream's status and message, scrubbed.
func (c *conn) Realtime(ctx context.Context, call llm.RealtimeCall) (llm.RealtimeConn, error) {
	p, ok := c.prep["realtime"]
	if !ok {
		return nil, &llm.Error{Kind: llm.Invalid, Message: c.name + ": no Realtime URL could be made from the base URL"}
	}
	u, err := url.Parse(p.url)
	if err != nil {
		return nil, &llm.Error{Kind: llm.Invalid, Message: c.name + ": bad base URL", Err: err}
	}
	q := u.Query()
	q.Set("model", call.Model)
	u.RawQuery = q.Encode()
	h := p.header.Clone()
	for _, k := range []string{"Content-Type", "Accept", "Content-Length"} {
		h.Del(k)
	}
	return DialRealtime(ctx, c.origin, c.hc, u.String(), h, call.Beta)
}

// DialRealtime dials a Realtime session at u with the headers h (the credentials among
// them) and the client's OpenAI-Beta (""): the Azure adapter's as well as this one's. The
// refusals are *llm.Error, their text masked by scrub.
func DialRealtime(ctx context.Context, o Origin, hc *http.Client, u string, h http.Header, beta string) (llm.RealtimeConn, error) {
	if beta != "" {
		h.Set("OpenAI-Beta", beta)
	}
	ws, res, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: hc, HTTPHeader: h})
	if err != nil {
		if res != nil && res.StatusCode != http.StatusSwitchingProtocols {
			body, _ := io.ReadAll(io.LimitReader(res.Body, transport.MaxErrorBody))
			return nil, (&conn{origin: o}).statusError(&statusError{status: res.StatusCode, header: res.Header, body: body})
		}
		var le *llm.Error
		if errors.As(transport.Error(ctx, o.name, err), &le) {
			return nil, o.scrub.Error(le)
		}
		return nil, err
	}
	ws.SetReadLimit(realtimeReadLimit)
	return wsConn{ws}, nil
}

// Origin names a provider and masks its credentials in what its upstream writes.
type Origin = origin

// NewOrigin is the Origin of the provider name, whose credentials scrub masks.
func NewOrigin(name string, scrub llm.Scrub) Origin { return origin{name: name, scrub: scrub} }

// wsConn is an upstream Realtime session over a WebSocket.
type wsConn struct{ c *websocket.Conn }

func (w wsConn) Read(ctx context.Context) ([]byte, error) {
	_, b, err := w.c.Read(ctx)
	if err != nil && websocket.CloseStatus(err) == websocket.StatusNormalClosure {
		return nil, io.EOF
	}
	return b, err
}

func (w wsConn) Write(ctx context.Context, event []byte) error {
	return w.c.Write(ctx, websocket.MessageText, event)
}

func (w wsConn) Close() error { return w.c.Close(websocket.StatusNormalClosure, "") }
