package server

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/admin"
	"github.com/sluice-gw/sluice/internal/llm"
)

// adminRoutes serves the admin API under /admin/, only when an admin token is set: without
// one the paths do not exist (404).
func (s *Server) adminRoutes(e *echo.Echo) {
	if s.o.Gate.AdminToken == "" || s.o.Gate.Keys == nil {
		return
	}
	g := e.Group("/admin", s.adminAuth)
	ks := admin.Keys{Store: s.o.Gate.Keys, Guardrail: func(name string) bool { return s.o.Guards.ByName[name] != nil }}
	g.POST("/keys", s.keyRoute(ks.Create))
	g.GET("/keys", s.keyRoute(ks.List))
	g.GET("/keys/:id", s.keyRoute(ks.Get))
	g.PATCH("/keys/:id", s.keyRoute(ks.Patch))
	g.DELETE("/keys/:id", s.keyRoute(ks.Delete))
	g.GET("/usage", s.usageReport)   // adminusage.go
	g.DELETE("/cache", s.clearCache) // cache.go
}

// adminAuth lets through a request carrying the admin token (Bearer or x-api-key), compared
// in constant time (auth.Token).
func (s *Server) adminAuth(next echo.HandlerFunc) echo.HandlerFunc {
	want := auth.NewToken(s.o.Gate.AdminToken)
	return func(c echo.Context) error {
		if !want.Matches((dialect.Bearer | dialect.XAPIKey).Secret(c.Request())) {
			return s.deny(c, &llm.Error{Kind: llm.Unauthenticated, Code: "invalid_admin_token", Type: "invalid_request_error",
				Message: "The admin API needs the admin token: 'Authorization: Bearer TOKEN'."})
		}
		return next(c)
	}
}

// keyRoute serves one route of admin.Keys: op gets the path's id and, for POST and PATCH,
// the body.
func (s *Server) keyRoute(op func(ctx context.Context, id string, body []byte) (int, any, error)) echo.HandlerFunc {
	return func(c echo.Context) error {
		var body []byte
		if m := c.Request().Method; m == http.MethodPost || m == http.MethodPatch {
			var err error
			if body, err = s.readBody(c); err != nil {
				return s.reject(c, err)
			}
		}
		status, v, err := op(c.Request().Context(), c.Param("id"), body)
		if err != nil {
			return s.reject(c, err)
		}
		return c.JSON(status, v)
	}
}
