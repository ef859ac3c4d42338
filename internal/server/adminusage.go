package server

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/dialect/admin"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// usageReport serves GET /admin/usage (admin.UsageQuery): the account's lines, none when no
// account is kept.
func (s *Server) usageReport(c echo.Context) error {
	q, err := admin.UsageQuery(c.QueryParams(), time.Now())
	if err != nil {
		return s.reject(c, err)
	}
	var lines []usage.Line
	var total usage.Counts
	if s.o.Usage.Store != nil {
		if lines, total, err = usage.Report(c.Request().Context(), s.o.Usage.Store, q); err != nil {
			return s.reject(c, &llm.Error{Kind: llm.Unavailable, Status: http.StatusServiceUnavailable,
				Code: "redis_unavailable", Type: "server_error", Message: "The account (Redis) is unreachable. Retry shortly."})
		}
	}
	return c.JSON(http.StatusOK, admin.Report(q, lines, total))
}
