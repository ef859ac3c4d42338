package server

import (
	"net/http"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// SetTelemetry makes s record through tp and mp and serve metrics (nil: the process's)
// at /metrics, before s serves: tests read what it recorded in memory.
func SetTelemetry(s *Server, tp trace.TracerProvider, mp metric.MeterProvider, metrics http.Handler) {
	s.o.Telemetry.TracerProvider, s.o.Telemetry.MeterProvider, s.o.Telemetry.Metrics = tp, mp, metrics
	s.obs = observer(s.o)
}

// PublishStats publishes s's statistics to the fleet now, as its timer would.
func PublishStats(s *Server) { s.obs.Publish() }
