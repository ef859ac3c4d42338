package server

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
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
	g.GET("/usage", s.usageReport) // adminusage.go
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

// wireKey is a key as the admin API shows it. Secret is set only in the answer to its
// creation: the gateway keeps only the hash.
type wireKey struct {
	ID        string            `json:"id"`
	Object    string            `json:"object"`
	Secret    string            `json:"key,omitempty"`
	Name      string            `json:"name"`
	Models    []string          `json:"models"`
	RPM       int64             `json:"rpm"`
	TPM       int64             `json:"tpm"`
	ExpiresAt *time.Time        `json:"expires_at"`
	Metadata  map[string]string `json:"metadata"`
	CreatedAt time.Time         `json:"created_at"`
	Source    string            `json:"source"` // api | config (read-only)

	// Budget and Guardrails: keybudget.go.
	Budget     wireBudget `json:"budget"`
	Guardrails []string   `json:"guardrails"`
}

func toWire(k *auth.Key) wireKey {
	w := wireKey{ID: k.ID, Object: "key", Name: k.Name, Models: k.Models, RPM: k.RPM, TPM: k.TPM,
		Metadata: k.Metadata, CreatedAt: k.CreatedAt, Source: "api"}
	w.Budget, w.Guardrails = keyExtras(k)
	if w.Models == nil {
		w.Models = []string{}
	}
	if w.Metadata == nil {
		w.Metadata = map[string]string{}
	}
	if !k.ExpiresAt.IsZero() {
		t := k.ExpiresAt
		w.ExpiresAt = &t
	}
	if k.Static {
		w.Source = "config"
	}
	return w
}

// keyInput is the body of POST and PATCH. Absent members are nil: PATCH leaves them as they
// are; "expires_at": null removes the expiry.
type keyInput struct {
	Name      *string           `json:"name"`
	Models    []string          `json:"models"`
	RPM       *int64            `json:"rpm"`
	TPM       *int64            `json:"tpm"`
	ExpiresAt json.RawMessage   `json:"expires_at"`
	Metadata  map[string]string `json:"metadata"`

	// Budget and Guardrails: keybudget.go.
	Budget     *budgetInput `json:"budget"`
	Guardrails []string     `json:"guardrails"`
}

func badKey(param, msg string) error {
	return &llm.Error{Kind: llm.Invalid, Param: param, Type: "invalid_request_error", Message: msg}
}

// decodeKeyInput decodes the body of POST and PATCH as strictly as /v1 decodes its bodies
// (oai.Scan: exactly one JSON object, UTF-8, no duplicate member), then into keyInput,
// which refuses unknown members. A lenient decoder took null for an empty object: a key for
// every model.
func (s *Server) decodeKeyInput(c echo.Context) (*keyInput, error) {
	body, err := s.readBody(c)
	if err != nil {
		return nil, err
	}
	if err := oai.Scan(body, func(string, json.RawMessage) error { return nil }); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	in := &keyInput{}
	if err := dec.Decode(in); err != nil {
		return nil, badKey("", "The body must be a JSON object with name, models, rpm, tpm, expires_at, metadata, budget and guardrails: "+oai.JSONMsg(err))
	}
	return in, nil
}

// apply sets the members present in in on k, and checks the result.
func (in *keyInput) apply(k *auth.Key, now time.Time) error {
	if in.Name != nil {
		k.Name = *in.Name
	}
	if in.Models != nil {
		k.Models = in.Models
	}
	if in.RPM != nil {
		k.RPM = *in.RPM
	}
	if in.TPM != nil {
		k.TPM = *in.TPM
	}
	if in.Metadata != nil {
		k.Metadata = in.Metadata
	}
	if err := in.applyExtras(k); err != nil {
		return err
	}
	switch {
	case in.ExpiresAt == nil:
	case string(in.ExpiresAt) == "null":
		k.ExpiresAt = time.Time{}
	default:
		var t time.Time
		if json.Unmarshal(in.ExpiresAt, &t) != nil {
			return badKey("expires_at", "expires_at must be an RFC 3339 timestamp (2026-12-31T23:59:59Z) or null.")
		}
		if !t.After(now) {
			return badKey("expires_at", "expires_at is in the past.")
		}
		k.ExpiresAt = t.UTC()
	}
	switch {
	case len(k.Name) > 256:
		return badKey("name", "name is longer than 256 bytes.")
	case len(k.Models) == 0 || len(k.Models) > 256:
		return badKey("models", `models must list 1 to 256 model aliases or provider/model targets; ["*"] allows all.`)
	case k.RPM < 0 || k.TPM < 0:
		return badKey("rpm", "rpm and tpm must not be negative (0: unlimited).")
	case len(k.Metadata) > auth.MaxMetadataPairs:
		return badKey("metadata", "metadata holds at most 16 pairs.")
	}
	for _, m := range k.Models {
		if m == "" {
			return badKey("models", "models cannot hold an empty name.")
		}
	}
	for n, v := range k.Metadata {
		if n == "" || len(n) > auth.MaxMetadataKey || len(v) > auth.MaxMetadataValue {
			return badKey("metadata", "metadata keys are 1 to 64 bytes, values at most 512.")
		}
	}
	return nil
}

func (s *Server) createKey(c echo.Context) error {
	in, err := s.decodeKeyInput(c)
	if err != nil {
		return s.reject(c, err)
	}
	now := time.Now()
	secret := auth.NewSecret()
	k := &auth.Key{ID: auth.NewID(), Hash: auth.Hash(secret), Models: []string{"*"}, CreatedAt: now.UTC().Truncate(time.Second)}
	if err := in.apply(k, now); err != nil {
		return s.reject(c, err)
	}
	if err := s.keyGuardrails(k); err != nil {
		return s.reject(c, err)
	}
	if err := s.o.Gate.Keys.Create(c.Request().Context(), k); err != nil {
		return s.reject(c, keyStoreError(err))
	}
	w := toWire(k)
	w.Secret = secret
	return c.JSON(http.StatusCreated, w)
}

func (s *Server) listKeys(c echo.Context) error {
	ks, err := s.o.Gate.Keys.List(c.Request().Context())
	if err != nil {
		return s.reject(c, keyStoreError(err))
	}
	data := make([]wireKey, len(ks))
	for i, k := range ks {
		data[i] = toWire(k)
	}
	return c.JSON(http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (s *Server) getKey(c echo.Context) error {
	k, err := s.o.Gate.Keys.Get(c.Request().Context(), c.Param("id"))
	if err != nil {
		return s.reject(c, keyStoreError(err))
	}
	return c.JSON(http.StatusOK, toWire(k))
}

func (s *Server) patchKey(c echo.Context) error {
	in, err := s.decodeKeyInput(c)
	if err != nil {
		return s.reject(c, err)
	}
	now := time.Now()
	k, err := s.o.Gate.Keys.Update(c.Request().Context(), c.Param("id"), func(k *auth.Key) error {
		if err := in.apply(k, now); err != nil {
			return err
		}
		return s.keyGuardrails(k)
	})
	if err != nil {
		return s.reject(c, keyStoreError(err))
	}
	return c.JSON(http.StatusOK, toWire(k))
}

func (s *Server) deleteKey(c echo.Context) error {
	id := c.Param("id")
	if err := s.o.Gate.Keys.Delete(c.Request().Context(), id); err != nil {
		return s.reject(c, keyStoreError(err))
	}
	return c.JSON(http.StatusOK, map[string]any{"id": id, "object": "key.deleted", "deleted": true})
}

// keyStoreError maps a Store's errors to the admin API's answers.
func keyStoreError(err error) error {
	var le *llm.Error
	switch {
	case errors.As(err, &le):
		return err
	case errors.Is(err, auth.ErrNotFound):
		return &llm.Error{Kind: llm.NotFound, Code: "key_not_found", Type: "invalid_request_error", Param: "id",
			Message: "No key with this id."}
	case errors.Is(err, auth.ErrStatic):
		return &llm.Error{Kind: llm.Invalid, Status: http.StatusConflict, Code: "key_in_config", Type: "invalid_request_error",
			Message: "This key is defined in the configuration file: change it there."}
	case errors.Is(err, auth.ErrExists):
		return &llm.Error{Kind: llm.Invalid, Status: http.StatusConflict, Code: "key_exists", Type: "invalid_request_error",
			Message: "A key with this id or hash exists."}
	}
	return &llm.Error{Kind: llm.Unavailable, Status: http.StatusServiceUnavailable, Code: "redis_unavailable",
		Type: "server_error", Message: "The key store (Redis) is unreachable. Retry shortly."}
}
