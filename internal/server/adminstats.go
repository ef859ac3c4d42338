package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/cache"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// adminStats serves GET /admin/stats?minutes=N: per alias and served target over the last N
// minutes (default and maximum: telemetry.stats_window), every replica's when Redis is
// configured. With Redis unreachable it answers for this replica alone, and says so.
func (s *Server) adminStats(c echo.Context) error {
	window := int(s.obs.window / time.Minute)
	minutes := window
	if q := c.QueryParam("minutes"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 1 || n > window {
			return s.reject(c, &llm.Error{Kind: llm.Invalid, Param: "minutes", Type: "invalid_request_error",
				Message: "minutes must be a whole number from 1 to " + strconv.Itoa(window) + " (telemetry.stats_window)."})
		}
		minutes = n
	}
	var r stats
	if f := s.obs.fleet; f != nil {
		r.Report = f.Report(c.Request().Context(), minutes)
	} else {
		r.Report = telemetry.Merge(time.Now(), minutes, []telemetry.Snapshot{s.obs.tel.Stats().Snapshot("local")})
	}
	if s.o.Cache != nil {
		r.Cache = s.o.Cache.Stats()
	}
	return c.JSON(http.StatusOK, r)
}

// stats is the answer of GET /admin/stats: the report, and the response cache's counts
// per alias on this replica since it started (absent when no alias caches).
type stats struct {
	telemetry.Report
	Cache []cache.Stat `json:"cache,omitempty"`
}
