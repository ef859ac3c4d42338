package server

import (
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/redisstore"
)

// SetLimitWindow sets the span of the rpm and tpm limits, before s serves: tests count over
// an hour, so that nothing leaves the window while they count.
func SetLimitWindow(s *Server, d time.Duration) { s.adm.Window = d } // Gate.Window is read once, by New

// RedisStore is the server's Redis store; nil without Redis.
func RedisStore(s *Server) *redisstore.Store {
	rs, _ := s.o.Gate.Shared.(*redisstore.Store)
	return rs
}

// Routes are the routes s serves (echo's table).
func Routes(s *Server) []*echo.Route { return s.echo.Routes() }

// SetThrottle replaces the throttle of failed admin tokens (Gate.Throttle, read at each
// request): a test that walks every route with a wrong token raises its limit.
func SetThrottle(s *Server, t *auth.Throttle) { s.o.Gate.Throttle = t }
