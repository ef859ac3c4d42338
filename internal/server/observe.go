package server

import (
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/relay"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// unobserved are the paths that get no span: probes and scrapes, every few seconds each.
var unobserved = map[string]bool{"/metrics": true, "/healthz": true, "/readyz": true}

// observe starts the telemetry of a request, whose access record is in, and returns what
// ends it, once in is complete. The request's context carries the server span from then
// on, so the providers' calls propagate it upstream.
func (s *Server) observe(c echo.Context, in *telemetry.Access) (end func()) {
	r := c.Request()
	if unobserved[r.URL.Path] {
		return func() {}
	}
	ctx, rq := s.obs.Start(r.Context(), r, c.Path(), in.Start)
	c.SetRequest(r.WithContext(ctx))
	h := c.Response().Header()
	if tr := rq.TraceResponse(); tr != "" {
		h.Set("Traceresponse", tr)
	}
	c.Response().Before(func() {
		if h.Get("X-Accel-Buffering") == "no" { // every stream's (sse.Headers), SSE or not
			rq.StreamOpened(ctx)
			return
		}
		// A non-streamed answer says how long the gateway itself took (issue 10): the time
		// so far outside calls to providers. A stream's headers leave before that is known.
		if in.Model != "" && !in.Stream {
			h.Set("X-Sluice-Overhead-Ms", strconv.FormatFloat(millis(telemetry.Overhead(in, time.Now())), 'f', 3, 64))
		}
	})
	return func() {
		rq.End(ctx, in)
		if in.Model != "" {
			s.obs.Served()
		}
	}
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// roundOptions are the relay options of a round of the request c: the alias's redaction
// window, think filter and coalescing; the time to first token counts from the request's
// arrival, what a reader waits for (DESIGN §4), not from commit.
func (s *Server) roundOptions(c echo.Context, chain *fallback.Chain) relay.Options {
	p := s.o.Policies[chain.Alias]
	return relay.Options{NewWindow: s.o.NewWindow, RedactJSON: s.o.RedactJSON, Start: reqInfo(c).Start,
		ThinkFilter: p.ThinkFilter, Coalesce: p.Coalesce}
}

// observeRoutes serves GET /metrics (Prometheus, when telemetry.prometheus is on; no auth,
// like any scrape target: keep the port off the public network).
func (s *Server) observeRoutes(e *echo.Echo) {
	e.GET("/metrics", func(c echo.Context) error {
		h := s.obs.Metrics()
		if h == nil {
			return s.reject(c, &llm.Error{Kind: llm.NotFound, Code: "not_found", Type: "invalid_request_error",
				Message: "Metrics are off (telemetry.prometheus: false)."})
		}
		h.ServeHTTP(c.Response(), c.Request())
		return nil
	})
}
