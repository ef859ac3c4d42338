package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/cache"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// adminStats serves GET /admin/stats?minutes=N: per alias and served target over the last N
// minutes (default and maximum: telemetry.stats_window), every replica's when Redis is
// configured. With Redis unreachable it answers for this replica alone, and says so.
func (s *Server) adminStats(c echo.Context) error {
	var r stats
	var err error
	if r.Report, err = s.obs.Report(c.Request().Context(), c.QueryParam("minutes")); err != nil {
		return s.reject(c, err)
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
