package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// exposed are the response headers a browser app may read: who served, the rate limits, and
// the UI stream's marker.
const exposed = "X-Request-Id, X-Sluice-Target, X-Sluice-Attempts, X-Vercel-Ai-Ui-Message-Stream, Retry-After, " +
	"X-Ratelimit-Limit-Requests, X-Ratelimit-Remaining-Requests, X-Ratelimit-Limit-Tokens, X-Ratelimit-Remaining-Tokens"

// cors lets browser apps on cors.allowed_origins call /v1 (DESIGN §9): none by default. It runs
// before routing and auth, so that a preflight, which browsers send without the key, is
// answered here. The key travels in Authorization, never in a cookie: no credentials mode.
func (s *Server) cors(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		origin := r.Header.Get("Origin")
		if len(s.o.UI.Origins) == 0 || origin == "" || !strings.HasPrefix(r.URL.Path, "/v1/") {
			return next(c)
		}
		h := c.Response().Header()
		h.Add("Vary", "Origin")
		if !s.allowedOrigin(origin) {
			return next(c) // no CORS headers: the browser keeps the answer from the page
		}
		h.Set("Access-Control-Allow-Origin", origin)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
			h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
			if rh := r.Header.Get("Access-Control-Request-Headers"); rh != "" {
				h.Set("Access-Control-Allow-Headers", rh)
			}
			h.Set("Access-Control-Max-Age", "600")
			return c.NoContent(http.StatusNoContent)
		}
		h.Set("Access-Control-Expose-Headers", exposed)
		return next(c)
	}
}

func (s *Server) allowedOrigin(origin string) bool {
	for _, o := range s.o.UI.Origins {
		if o == "*" || strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return true
		}
	}
	return false
}
