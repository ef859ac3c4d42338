package server

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/console"
	"github.com/sluice-gw/sluice/internal/limit"
)

// Gate guards the route table (DESIGN §6): who may call (virtual keys), which models, how often (rate
// limits). The zero value lets every caller through: auth is off.
type Gate struct {
	// Keys authenticates callers; nil: auth off.
	Keys *auth.Keys
	// Teams are the keys' teams (issue 37); nil: none.
	Teams *auth.Teams
	// Limiter enforces the keys' rpm and tpm; nil: no limits.
	Limiter limit.Limiter
	// Window is the span of rpm and tpm: a minute (tests lengthen it so that nothing leaves
	// the window while they count).
	Window time.Duration
	// AdminToken turns the admin API on; empty: /admin/ is not served.
	AdminToken string
	// Users are the admin API's users and their personal tokens; nil: none.
	Users auth.Users
	// Shared is the shared state /readyz reports on; nil: in-memory state.
	Shared Shared
	// FailOpen is redis.on_failure: open (/readyz stays 200 while Redis is down).
	FailOpen bool
	// Closer releases the shared state's connections at Server.Close; nil: nothing to close.
	Closer io.Closer
	// Console is the console at /console/, whose sessions call the admin API (nil: none).
	Console  *console.Console
	Throttle *auth.Throttle // limits failed tokens per address and token (issue 47); nil: none
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
