package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/playground"
)

// playgroundRoutes serves the playground page at "/" and its files (internal/playground).
// They are public like /healthz: the page holds no secret (the gateway's keys never reach
// it), and the calls it makes to /v1 and /admin carry the virtual key and the admin token
// its user types, like any client's, through the same gate.
func (s *Server) playgroundRoutes(e *echo.Echo) {
	h := echo.WrapHandler(playground.Handler())
	e.GET("/", h)
	e.HEAD("/", h)
	e.GET(playground.Prefix+"*", h)
	e.HEAD(playground.Prefix+"*", h)
	if co := s.o.Gate.Console; co != nil { // its own sign-in (internal/console)
		m := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodDelete}
		e.Match(m, "/console", echo.WrapHandler(co.Handler()))
		e.Match(m, "/console/*", echo.WrapHandler(co.Handler()))
	}
}
