package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// adminStats serves GET /admin/stats?minutes=N: per alias and served target, and the
// response cache's results per alias, over the last N minutes (default and maximum:
// telemetry.stats_window), every replica's when Redis is configured. With Redis unreachable
// it answers for this replica alone, and says so.
func (s *Server) adminStats(c echo.Context) error {
	r, err := s.obs.Report(c.Request().Context(), c.QueryParam("minutes"))
	if err != nil {
		return s.reject(c, err)
	}
	return c.JSON(http.StatusOK, r)
}
