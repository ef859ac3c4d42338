package fallback

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Provider calls one upstream. Stream starts a streamed call of req (req.Model is the
// upstream's model name) and returns once the upstream answered with its status: a non-2xx
// answer or a connection failure is an *llm.Error with its Kind and Status. The returned stream
// is owned by the caller, who must Close it. Canceling ctx aborts the call and the stream. A
// provider that dials bounds its dial by ConnectTimeout(ctx).
type Provider interface {
	Stream(ctx context.Context, req *llm.Request) (llm.Stream, error)
}

type connectKey struct{}

// ConnectTimeout is the connect timeout of the attempt whose context is ctx (Timeouts.Connect),
// for the provider's dialer; false when the target sets none. The value survives
// context.WithoutCancel, as net/http's dial context is.
func ConnectTimeout(ctx context.Context) (time.Duration, bool) {
	d, ok := ctx.Value(connectKey{}).(time.Duration)
	return d, ok
}

// HTTPClient is the client the HTTP adapters share unless configured with their own: one pool
// of connections for every upstream (a gateway sends most of its traffic to a handful of
// hosts), dials bounded by the attempt's ConnectTimeout (5 s when it names none), and no
// overall Timeout: streams are long, and the attempt's context bounds first-event, idle and
// total time.
var HTTPClient = &http.Client{Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	DialContext:           dial,
	ForceAttemptHTTP2:     true,
	MaxIdleConns:          1024,
	MaxIdleConnsPerHost:   256,
	IdleConnTimeout:       90 * time.Second,
	TLSHandshakeTimeout:   10 * time.Second,
	ExpectContinueTimeout: time.Second,
}}

// defaultConnect bounds a dial when the context names no connect timeout (DESIGN §3).
const defaultConnect = 5 * time.Second

func dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: defaultConnect, KeepAlive: 30 * time.Second}
	if t, ok := ConnectTimeout(ctx); ok {
		d.Timeout = t
	}
	return d.DialContext(ctx, network, addr)
}
