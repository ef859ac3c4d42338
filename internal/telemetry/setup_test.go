package telemetry

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestNewSDK(t *testing.T) {
	tests := []struct {
		name           string
		c              Config
		traces, expose bool
		err            string
	}{
		{"embedded default: Prometheus, no OTLP", Config{Prometheus: true, Getenv: env()}, false, false, ""},
		{"nothing at all", Config{Getenv: env()}, false, false, ""},
		{"endpoint in the file", Config{OTLPEndpoint: "http://127.0.0.1:4318", Getenv: env()}, true, true, ""},
		{"grpc", Config{OTLPEndpoint: "http://127.0.0.1:4317", OTLPProtocol: "grpc", Getenv: env()}, true, true, ""},
		{"endpoint from the environment", Config{Getenv: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")}, true, true, ""},
		{"traces only", Config{Getenv: env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:4318/v1/traces")}, true, false, ""},
		{"metrics exporter none", Config{OTLPEndpoint: "http://127.0.0.1:4318", Getenv: env("OTEL_METRICS_EXPORTER", "none")}, true, false, ""},
		{"SDK disabled", Config{OTLPEndpoint: "http://127.0.0.1:4318", Getenv: env("OTEL_SDK_DISABLED", "true")}, false, false, ""},
		{"not a URL", Config{OTLPEndpoint: "collector:4317", Getenv: env()}, false, false, "otlp_endpoint"},
		{"unknown protocol", Config{OTLPEndpoint: "http://127.0.0.1:4318", OTLPProtocol: "thrift", Getenv: env()}, false, false, "otlp_protocol"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewSDK(context.Background(), tt.c)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want an error naming %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Nothing listens on the collector's port: shutting down must not hang on it.
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			defer s.Shutdown(ctx)
			if s.ExportsTraces != tt.traces || s.ExportsMetrics != tt.expose {
				t.Errorf("got traces %v metrics %v, want %v %v", s.ExportsTraces, s.ExportsMetrics, tt.traces, tt.expose)
			}
			if (s.Metrics != nil) != tt.c.Prometheus {
				t.Errorf("got a metrics handler %v, want one only with Prometheus on", s.Metrics != nil)
			}
		})
	}
}

// The Prometheus handler serves the gateway's metrics in the text format.
func TestPrometheusExposition(t *testing.T) {
	s, err := NewSDK(context.Background(), Config{Prometheus: true, Getenv: env()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	tel := New(Options{TracerProvider: s.TracerProvider, MeterProvider: s.MeterProvider, Metrics: s.Metrics})
	Guardrail(tel.Context(context.Background()), "terms-out", "input", VerdictPass)
	rec := httptest.NewRecorder()
	tel.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	f := fams["sluice_guardrail_verdicts_total"]
	if f == nil || f.Metric[0].GetCounter().GetValue() != 1 {
		t.Fatalf("got %v, want sluice_guardrail_verdicts_total 1", f)
	}
	if fams["otel_scope_info"] != nil {
		t.Errorf("got otel_scope_info, want no scope labels")
	}
}
