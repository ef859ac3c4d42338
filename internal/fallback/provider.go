package fallback

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
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

// ContextError is the error of an attempt whose ctx is done: Canceled when the client left,
// Timeout when a deadline passed, or the *llm.Error the chain gave as the cancel cause (its
// own timeouts); nil while ctx is live. Adapters return it whatever their read saw.
func ContextError(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	cause := context.Cause(ctx)
	var le *llm.Error
	if errors.As(cause, &le) {
		return le
	}
	if errors.Is(cause, context.DeadlineExceeded) {
		return &llm.Error{Kind: llm.Timeout, Message: cause.Error(), Err: cause}
	}
	return &llm.Error{Kind: llm.Canceled, Message: cause.Error(), Err: cause}
}

// TransportError is the *llm.Error of an HTTP call of provider name that got no answer: the
// attempt's ContextError when its ctx is done, else Unavailable (Timeout for a dial or TLS
// timeout). A *url.Error prints the URL, whose query may hold a credential: only its cause
// is kept.
func TransportError(ctx context.Context, name string, err error) error {
	if e := ContextError(ctx); e != nil {
		return e
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	kind := llm.Unavailable
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		kind = llm.Timeout
	}
	return &llm.Error{Kind: kind, Message: name + ": " + err.Error(), Err: err}
}
