package config

import "time"

// telemetry checks the telemetry: block. The endpoint is not quoted: it may carry a token.
func (v *validator) telemetry(t Telemetry) {
	if t.OTLPEndpoint != "" {
		v.httpURL("telemetry.otlp_endpoint", t.OTLPEndpoint)
	}
	if !oneOf(t.OTLPProtocol, "", "grpc", "http/protobuf", "http") {
		v.errorf("telemetry.otlp_protocol", "want grpc or http/protobuf, got %q", t.OTLPProtocol)
	}
	if w := t.StatsWindow.Std(); w != 0 && (w < time.Minute || w > 24*time.Hour) {
		v.errorf("telemetry.stats_window", "want 1m to 24h")
	}
}
