package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/admin"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/sse"
)

// adminRoutes serves the admin API under /admin/ (admin.API), only when an admin token is
// set: without one the paths do not exist (404).
func (s *Server) adminRoutes(e *echo.Echo) {
	if (s.o.Gate.AdminToken == "" || s.o.Gate.Keys == nil) && s.o.Gate.Console == nil {
		return
	}
	a := s.o.Admin
	if s.o.Gate.Keys != nil { // else auth is off: no key to manage (admin.API.Routes)
		a.Keys = admin.Keys{Store: s.o.Gate.Keys, Teams: s.o.Gate.Teams, Guardrail: func(name string) bool { return s.o.Guards.ByName[name] != nil }}
		if s.o.Gate.Teams != nil {
			a.Teams = admin.Teams{Store: s.o.Gate.Teams, Keys: s.o.Gate.Keys}
		}
	}
	a.Usage, a.Stats = s.o.Usage.Store, s.obs.Report
	if s.o.Cache != nil {
		a.Clear = s.o.Cache.Clear
	}
	g := e.Group("/admin", s.adminAuth) // every path under it, an unknown one too, needs the token
	for _, rt := range a.Routes() {
		g.Add(rt.Method, strings.TrimPrefix(rt.Path, "/admin"), s.adminOp(rt.Op))
	}
}

// adminAuth lets through a request carrying the admin token (Bearer or x-api-key), compared
// in constant time (auth.Token).
func (s *Server) adminAuth(next echo.HandlerFunc) echo.HandlerFunc {
	want := auth.NewToken(s.o.Gate.AdminToken)
	return func(c echo.Context) error {
		co := s.o.Gate.Console // or a console session, with its CSRF token for a change
		ok := s.o.Gate.AdminToken != "" && want.Matches((dialect.Bearer | dialect.XAPIKey).Secret(c.Request()))
		if !ok && (co == nil || !co.Authorize(c.Request())) {
			return s.deny(c, &llm.Error{Kind: llm.Unauthenticated, Code: "invalid_admin_token", Type: "invalid_request_error",
				Message: "The admin API needs the admin token: 'Authorization: Bearer TOKEN'."})
		}
		// Both the token and a console session (signed in with the token) are the bootstrap
		// admin; the handlers and the audit log read who from the context.
		r := c.Request()
		c.SetRequest(r.WithContext(auth.WithPrincipal(r.Context(), auth.Bootstrap)))
		return next(c)
	}
}

// adminOp serves one route of the admin API: op gets the path's id, the query and, for
// POST and PATCH, the body.
func (s *Server) adminOp(op admin.Op) echo.HandlerFunc {
	return func(c echo.Context) error {
		in := admin.Input{ID: c.Param("id"), Query: c.QueryParams()}
		if m := c.Request().Method; m == http.MethodPost || m == http.MethodPatch {
			var err error
			if in.Body, err = s.readBody(c); err != nil {
				return s.reject(c, err)
			}
		}
		status, v, err := op(c.Request().Context(), in)
		if err != nil {
			return s.reject(c, err)
		}
		if st, ok := v.(admin.Stream); ok { // an export, a live tail
			return st.Serve(c.Request().Context(), c.Response(), func() *sse.Writer { return s.newEventWriter(c, nil) })
		}
		return c.JSON(status, v)
	}
}
