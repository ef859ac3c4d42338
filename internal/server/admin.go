package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/admin"
	"github.com/sluice-gw/sluice/internal/sse"
)

// adminRoutes serves the admin API under /admin/ (admin.API), only when an admin token is
// set: without one the paths do not exist (404).
func (s *Server) adminRoutes(e *echo.Echo) {
	if (s.o.Gate.AdminToken == "" || s.o.Gate.Keys == nil) && s.o.Gate.Console == nil {
		return
	}
	a := s.o.Admin.WithStores(s.o.Gate.Keys, s.o.Gate.Teams, s.o.Gate.Users, func(name string) bool { return s.o.Guards.ByName[name] != nil })
	a.Usage, a.Stats = s.o.Usage.Store, s.obs.Report
	if s.o.Cache != nil {
		a.Clear = s.o.Cache.Clear
	}
	g := e.Group("/admin", s.adminAuth) // every path under it, an unknown one too, needs the token
	for _, rt := range a.Routes() {
		g.Add(rt.Method, strings.TrimPrefix(rt.Path, "/admin"), s.adminOp(rt.Op))
	}
}

// adminAuth lets through the admin token, a personal token (auth.Admins) or a console session,
// and puts whom it acts for in the context (the role policy, admin.API's guard, reads it).
func (s *Server) adminAuth(next echo.HandlerFunc) echo.HandlerFunc {
	admins := auth.NewAdmins(s.o.Gate.AdminToken, s.o.Gate.Users)
	return func(c echo.Context) error {
		r := c.Request()
		p, err := s.o.Gate.Throttle.Principal(r, auth.SurfaceAdmin, admins, (dialect.Bearer | dialect.XAPIKey).Secret(r))
		if co := s.o.Gate.Console; p == nil && co != nil {
			if w, ok := co.Authorize(r); ok {
				p, err = &auth.Principal{User: w.User, Role: auth.Role(w.Role), Teams: w.Teams}, nil
			}
		}
		if p == nil {
			return s.deny(c, admin.AuthError(err)) // 401, 429 (Gate.Throttle), or 503: a store is unreachable
		}
		c.SetRequest(r.WithContext(auth.WithPrincipal(r.Context(), p)))
		return next(c)
	}
}

// adminOp serves one route of the admin API: op gets the path's id, the query and, for
// POST and PATCH, the body.
func (s *Server) adminOp(op admin.Op) echo.HandlerFunc {
	return func(c echo.Context) error {
		in := admin.NewInput(dialect.PathParams(c.Param, c.Request().URL), c.QueryParams())
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
