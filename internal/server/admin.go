package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/auth"
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
	g.POST("/keys", s.createKey)
	g.GET("/keys", s.listKeys)
	g.GET("/keys/:id", s.getKey)
	g.PATCH("/keys/:id", s.patchKey)
	g.DELETE("/keys/:id", s.deleteKey)
	g.GET("/usage", s.usageReport)   // adminusage.go
	g.DELETE("/cache", s.clearCache) // cache.go
}

// adminAuth lets through a request carrying the admin token (Bearer or x-api-key). The
// comparison is of SHA-256 digests in constant time: neither the token's content nor its
// length leaks through timing.
func (s *Server) adminAuth(next echo.HandlerFunc) echo.HandlerFunc {
	want := sha256.Sum256([]byte(s.o.Gate.AdminToken))
	return func(c echo.Context) error {
		r := c.Request()
		got := sha256.Sum256([]byte(auth.FromRequest(r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"))))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			return s.deny(c, &llm.Error{Kind: llm.Unauthenticated, Code: "invalid_admin_token", Type: "invalid_request_error",
				Message: "The admin API needs the admin token: 'Authorization: Bearer TOKEN'."})
		}
		return next(c)
	}
}

func (s *Server) createKey(c echo.Context) error {
	in, err := s.decodeKey(c)
	if err != nil {
		return s.reject(c, err)
	}
	now := time.Now()
	secret := auth.NewSecret()
	k := &auth.Key{ID: auth.NewID(), Hash: auth.Hash(secret), Models: []string{"*"}, CreatedAt: now.UTC().Truncate(time.Second)}
	if err := in.Apply(k, now); err != nil {
		return s.reject(c, err)
	}
	if err := s.keyGuardrails(k); err != nil {
		return s.reject(c, err)
	}
	if err := s.o.Gate.Keys.Create(c.Request().Context(), k); err != nil {
		return s.reject(c, admin.StoreError(err))
	}
	w := admin.Encode(k)
	w.Secret = secret
	return c.JSON(http.StatusCreated, w)
}

func (s *Server) listKeys(c echo.Context) error {
	ks, err := s.o.Gate.Keys.List(c.Request().Context())
	if err != nil {
		return s.reject(c, admin.StoreError(err))
	}
	data := make([]admin.Key, len(ks))
	for i, k := range ks {
		data[i] = admin.Encode(k)
	}
	return c.JSON(http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (s *Server) getKey(c echo.Context) error {
	k, err := s.o.Gate.Keys.Get(c.Request().Context(), c.Param("id"))
	if err != nil {
		return s.reject(c, admin.StoreError(err))
	}
	return c.JSON(http.StatusOK, admin.Encode(k))
}

func (s *Server) patchKey(c echo.Context) error {
	in, err := s.decodeKey(c)
	if err != nil {
		return s.reject(c, err)
	}
	now := time.Now()
	k, err := s.o.Gate.Keys.Update(c.Request().Context(), c.Param("id"), func(k *auth.Key) error {
		if err := in.Apply(k, now); err != nil {
			return err
		}
		return s.keyGuardrails(k)
	})
	if err != nil {
		return s.reject(c, admin.StoreError(err))
	}
	return c.JSON(http.StatusOK, admin.Encode(k))
}

func (s *Server) deleteKey(c echo.Context) error {
	id := c.Param("id")
	if err := s.o.Gate.Keys.Delete(c.Request().Context(), id); err != nil {
		return s.reject(c, admin.StoreError(err))
	}
	return c.JSON(http.StatusOK, map[string]any{"id": id, "object": "key.deleted", "deleted": true})
}

// decodeKey reads and decodes the body of POST and PATCH.
func (s *Server) decodeKey(c echo.Context) (*admin.KeyInput, error) {
	body, err := s.readBody(c)
	if err != nil {
		return nil, err
	}
	return admin.DecodeKey(body)
}
