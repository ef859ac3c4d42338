package transport

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// HTTPClient is the client the HTTP adapters share unless configured with their own: one pool
// of connections for every upstream (a gateway sends most of its traffic to a handful of
// hosts), dials bounded by the attempt's llm.ConnectTimeout (5 s when it names none), and no
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
	if t, ok := llm.ConnectTimeout(ctx); ok {
		d.Timeout = t
	}
	return d.DialContext(ctx, network, addr)
}

// Error is the *llm.Error of an HTTP call of provider name that got no answer: the
// attempt's llm.ContextError when its ctx is done, else Unavailable (Timeout for a dial or
// TLS timeout). A *url.Error prints the URL, whose query may hold a credential: only its
// cause is kept.
func Error(ctx context.Context, name string, err error) error {
	if e := llm.ContextError(ctx); e != nil {
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
