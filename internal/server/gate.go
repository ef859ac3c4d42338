package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/admit"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/limit"
	"github.com/sluice-gw/sluice/internal/llm"
)

// Gate guards /v1 (DESIGN §6): who may call (virtual keys), which models, how often (rate
// limits). The zero value lets every caller through: auth is off.
type Gate struct {
	// Keys authenticates callers; nil: auth off.
	Keys *auth.Keys
	// Limiter enforces the keys' rpm and tpm; nil: no limits.
	Limiter limit.Limiter
	// Window is the span of rpm and tpm: a minute (tests lengthen it so that nothing leaves
	// the window while they count).
	Window time.Duration
	// AdminToken turns the admin API on; empty: /admin/ is not served.
	AdminToken string
	// Shared is the shared state /readyz reports on; nil: in-memory state.
	Shared Shared
	// FailOpen is redis.on_failure: open (/readyz stays 200 while Redis is down).
	FailOpen bool
	// Closer releases the shared state's connections at Server.Close; nil: nothing to close.
	Closer io.Closer
}

// Shared is the shared state as readiness sees it.
type Shared interface {
	Ping(ctx context.Context) error
}

// Close releases the gate's connections (Redis). The server must not serve after it.
func (s *Server) Close() error {
	_ = s.o.UI.Runs.Close() // runs first: they write their end to the store
	if s.o.MCP != nil {
		_ = s.o.MCP.Close() // its subscription to the other replicas' cancellations
	}
	if s.o.UI.Tools.Set != nil {
		_ = s.o.UI.Tools.Set.Close() // no run is left to call a tool
	}
	s.obs.Close() // no more statistics to publish: the store closes
	if s.o.Gate.Closer != nil {
		return s.o.Gate.Closer.Close()
	}
	return nil
}

// callerKey is the key a request was authenticated with; nil when auth is off.
func callerKey(c echo.Context) *auth.Key { return exchangeOf(c).key }

// gate authenticates every /v1 request and, for a request that names a model, checks that
// the key may use it and reserves its rate limits, reconciled once the handler is done.
// It is server-wide middleware rather than per route, so that no /v1 route can miss it.
func (s *Server) gate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if s.o.Gate.Keys == nil || !strings.HasPrefix(r.URL.Path, "/v1/") {
			return next(c)
		}
		key, err := s.authenticate(c)
		if err != nil {
			return s.deny(c, err)
		}
		if r.Method != http.MethodPost {
			return next(c)
		}
		body, err := s.readBody(c)
		if err != nil {
			return s.reject(c, err)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		p := oai.Peek(body)
		if p.Model == "" {
			return next(c) // not a model call, or a body the handler refuses with a 400
		}
		if !key.Allows(p.Model) {
			return s.deny(c, admit.NotAllowed(p.Model))
		}
		cost := admit.Cost(len(body), p.MaxTokens, p.N, strings.HasSuffix(r.URL.Path, "/embeddings"), key.TPM)
		rsv, err := s.reserve(c, key, cost)
		if err != nil {
			return s.deny(c, err)
		}
		if err := next(c); err != nil {
			c.Error(err)
		}
		s.reconcile(c, key, rsv)
		return nil
	}
}

// authenticate finds the request's key (Bearer or x-api-key) and records it in the
// exchange; its error is what the client is told (admit.AuthError).
func (s *Server) authenticate(c echo.Context) (*auth.Key, error) {
	key, err := s.o.Gate.Keys.Authenticate(c.Request().Context(), secret(c.Request()), time.Now())
	if err != nil {
		return nil, admit.AuthError(err, s.o.Gate.FailOpen)
	}
	in := reqInfo(c)
	in.KeyID, in.KeyName = key.ID, key.Name
	exchangeOf(c).key = key
	return key, nil
}

// secret is the key or token r carries.
func secret(r *http.Request) string {
	return auth.FromRequest(r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"))
}

// deny answers a refusal of the gate before any handler ran. Unlike writeError it sends no
// x-should-retry: false: a rate limit or a brief Redis outage is worth the SDK's own retry,
// which honours Retry-After.
func (s *Server) deny(c echo.Context, err error) error {
	reqInfo(c).Kind = llm.KindOf(err)
	if d := retryAfter(c.Response().Header(), err); d > 0 {
		c.Response().Header().Set("Retry-After-Ms", strconv.Itoa(int(d.Milliseconds())))
	}
	return c.JSONBlob(errorBody(c, err))
}

// sharedReady is /readyz's answer when Redis is down, nil when it is up (or not used).
// Under open the gateway still serves, degraded, and stays in the load balancer: a
// fleet-wide 503 would be a full outage (DESIGN §6); under closed it refuses requests, and
// says so.
func (s *Server) sharedReady(ctx context.Context) ([]byte, int) {
	g := &s.o.Gate
	if g.Shared == nil || g.Shared.Ping(ctx) == nil {
		return nil, 0
	}
	if g.FailOpen {
		return []byte(`{"status":"degraded","redis":"unreachable","on_failure":"open"}`), http.StatusOK
	}
	return []byte(`{"status":"unavailable","redis":"unreachable","on_failure":"closed"}`), http.StatusServiceUnavailable
}
