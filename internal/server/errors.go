package server

import (
	"errors"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// writeError answers err before the first byte, in the wire's error format with its status.
// Failures that come out of the chain carry x-should-retry: false, so the SDKs do not replay
// a whole chain the gateway already walked (but for a status the wire's SDKs retry by
// design, dialect.API.Retried).
func (s *Server) writeError(c echo.Context, err error) error {
	h := c.Response().Header()
	status, body := s.errorBody(c, err)
	reqInfo(c).Error = telemetry.ErrorText(err)
	dialect.RetryAfter(h, err)
	var le *llm.Error
	if errors.As(err, &le) {
		switch le.Kind {
		case llm.RateLimited, llm.Unavailable, llm.Auth, llm.Timeout, llm.Truncated, llm.Refused:
			if status != s.apiOf(c).Retried {
				h.Set("X-Should-Retry", "false")
			}
		}
	}
	if status == 499 {
		// The client left: nobody reads this, and the log line says 499.
		c.Response().Status = status
		return nil
	}
	return c.JSONBlob(status, body)
}

// reject answers err as a plain HTTP error and records its kind in the access line.
func (s *Server) reject(c echo.Context, err error) error {
	reqInfo(c).Kind = llm.KindOf(err)
	return s.writeError(c, err)
}

// errorBody is the status and body of err answered before the first byte, in the request's
// wire (Server.apiOf).
func (s *Server) errorBody(c echo.Context, err error) (int, []byte) {
	api := s.apiOf(c)
	if api.RequestID != "" {
		c.Response().Header().Set(api.RequestID, reqInfo(c).ID)
	}
	return api.Error(err, reqInfo(c).Tries)
}

// httpError maps echo's own errors (unknown route, wrong method) to the wire's error body.
func (s *Server) httpError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		_, body := s.errorBody(c, dialect.RouteError(he.Code, c.Request().Method, c.Request().URL.Path))
		_ = c.JSONBlob(he.Code, body)
		return
	}
	_ = s.writeError(c, err)
}
