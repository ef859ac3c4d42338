package server_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/server"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// BenchmarkChatTelemetry is BenchmarkChat (streamed) with the telemetry a started gateway has
// by default (the SDK with Prometheus, no OTLP: spans get ids, metrics are recorded), against
// the API's no-op providers: the difference is what telemetry costs per request.
func BenchmarkChatTelemetry(b *testing.B) {
	ms := httptest.NewServer(mockllm.New(mockllm.Options{}))
	defer ms.Close()
	b.Run("noop", func(b *testing.B) { benchPost(b, benchServer(b, ms.URL), true) })
	b.Run("sdk", func(b *testing.B) {
		srv := benchServer(b, ms.URL)
		sdk, err := telemetry.NewSDK(context.Background(), telemetry.Config{Prometheus: true, Getenv: func(string) string { return "" }})
		if err != nil {
			b.Fatal(err)
		}
		defer sdk.Shutdown(context.Background())
		server.SetTelemetry(srv, sdk.TracerProvider, sdk.MeterProvider, sdk.Metrics)
		benchPost(b, srv, true)
	})
}
