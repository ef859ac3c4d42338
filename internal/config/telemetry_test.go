package config

import (
	"testing"
	"time"
)

func TestTelemetryBlock(t *testing.T) {
	c := mustParse(t, "telemetry: {otlp_endpoint: \"http://collector:4318\", otlp_protocol: grpc, stats_window: 5m, prometheus: false}\n", env())
	if c.Telemetry.OTLPProtocol != "grpc" || c.Telemetry.StatsWindow.Std() != 5*time.Minute || c.Telemetry.Prometheus {
		t.Errorf("got %+v", c.Telemetry)
	}
	tests := []struct{ name, src, want string }{
		{"endpoint without scheme", "telemetry: {otlp_endpoint: \"collector:4317\"}\n", "telemetry.otlp_endpoint"},
		{"protocol", "telemetry: {otlp_protocol: thrift}\n", "telemetry.otlp_protocol"},
		{"window too short", "telemetry: {stats_window: 10s}\n", "telemetry.stats_window"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkErr(t, tt.src, tt.want) })
	}
}
