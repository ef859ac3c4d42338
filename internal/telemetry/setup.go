package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// Config is the telemetry: block and what the process adds. The standard OTEL_* variables
// apply on top (OTEL_EXPORTER_OTLP_* for the exporters, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER, OTEL_METRIC_EXPORT_INTERVAL, ...).
type Config struct {
	// Prometheus serves GET /metrics.
	Prometheus bool
	// OTLPEndpoint is the collector's base URL ("http://collector:4318", or :4317 for gRPC);
	// "": OTEL_EXPORTER_OTLP_ENDPOINT (or the per-signal variables) when set, else no OTLP.
	OTLPEndpoint string
	// OTLPProtocol is grpc or http/protobuf; "": OTEL_EXPORTER_OTLP_PROTOCOL, else
	// http/protobuf.
	OTLPProtocol string
	// Version is the gateway's, for the service.version resource attribute; "": the
	// binary's (ReadBuild).
	Version string
	// Log receives exporter errors, at most one line a minute; nil: discarded.
	Log *slog.Logger
	// Getenv reads the environment (nil: os.Getenv); tests set it.
	Getenv func(string) string
}

// SDK is the OpenTelemetry SDK Setup built: the providers, the Prometheus handler, and the
// exporters behind them. Shutdown flushes and stops them.
type SDK struct {
	TracerProvider *sdktrace.TracerProvider
	MeterProvider  *sdkmetric.MeterProvider
	// Metrics serves the Prometheus exposition; nil when Prometheus is off.
	Metrics http.Handler
	// Exporting tells what goes out over OTLP.
	ExportsTraces, ExportsMetrics bool
}

// Setup builds the SDK from c and makes it the process's: the global tracer and meter
// providers, the W3C trace-context propagator, and the /metrics handler Telemetry serves.
// With no OTLP endpoint anywhere it starts no exporter and reaches out to no network (the
// embedded default); the OTLP exporters connect lazily in any case. Call it once, from main.
func Setup(ctx context.Context, c Config) (*SDK, error) {
	s, err := NewSDK(ctx, c)
	if err != nil {
		return nil, err
	}
	otel.SetTracerProvider(s.TracerProvider)
	otel.SetMeterProvider(s.MeterProvider)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	otel.SetErrorHandler(errorLog(c.Log))
	if s.Metrics != nil {
		processMetrics.Store(&s.Metrics)
	}
	return s, nil
}

// NewSDK builds the SDK without making it the process's (tests build their own).
func NewSDK(ctx context.Context, c Config) (*SDK, error) {
	getenv := c.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if c.Version == "" {
		c.Version = ReadBuild().Version
	}
	res, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName("sluice"), semconv.ServiceVersion(c.Version)),
		resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithHost())
	if err != nil && res == nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	s := &SDK{}
	exp, err := otlp(ctx, c, getenv)
	if err != nil {
		return nil, err
	}
	s.ExportsTraces, s.ExportsMetrics = exp.spans != nil, exp.metrics != nil
	topts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	switch {
	case exp.spans != nil:
		topts = append(topts, sdktrace.WithBatcher(exp.spans))
		if getenv("OTEL_TRACES_SAMPLER") == "" {
			topts = append(topts, sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())))
		}
	default:
		// No exporter: spans still get ids (traceresponse, the upstream's traceparent), and a
		// caller's sampled trace stays sampled downstream; nothing else is recorded.
		topts = append(topts, sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.NeverSample())))
	}
	s.TracerProvider = sdktrace.NewTracerProvider(topts...)
	mopts := []sdkmetric.Option{sdkmetric.WithResource(res)}
	if exp.metrics != nil {
		mopts = append(mopts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp.metrics)))
	}
	if c.Prometheus {
		// A registry of its own, not the global one: the process's Go and process metrics
		// and the gateway's, nothing a library registered behind its back.
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		pe, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo())
		if err != nil {
			return nil, fmt.Errorf("telemetry: prometheus: %w", err)
		}
		mopts = append(mopts, sdkmetric.WithReader(pe))
		s.Metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	}
	s.MeterProvider = sdkmetric.NewMeterProvider(mopts...)
	if err := recordBuild(s.MeterProvider.Meter(scope), ReadBuild()); err != nil {
		return nil, fmt.Errorf("telemetry: %s: %w", MetricBuildInfo, err)
	}
	return s, nil
}

// Shutdown flushes what is buffered and stops the exporters, within ctx.
func (s *SDK) Shutdown(ctx context.Context) error {
	return errors.Join(s.TracerProvider.Shutdown(ctx), s.MeterProvider.Shutdown(ctx))
}

type exporters struct {
	spans   sdktrace.SpanExporter
	metrics sdkmetric.Exporter
}

// otlp builds the OTLP exporters the configuration and the environment ask for.
func otlp(ctx context.Context, c Config, getenv func(string) string) (exporters, error) {
	var e exporters
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return e, nil
	}
	base := c.OTLPEndpoint
	traces := base != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	metrics := base != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != ""
	traces = traces && getenv("OTEL_TRACES_EXPORTER") != "none"
	metrics = metrics && getenv("OTEL_METRICS_EXPORTER") != "none"
	if !traces && !metrics {
		return e, nil
	}
	if base != "" {
		u, err := url.Parse(base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return e, fmt.Errorf("telemetry.otlp_endpoint: %q is not an http:// or https:// URL", base)
		}
		base = strings.TrimRight(base, "/")
	}
	proto := cmpOr(c.OTLPProtocol, cmpOr(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"), "http/protobuf"))
	var err error
	switch proto {
	case "grpc":
		if traces {
			var o []otlptracegrpc.Option
			if base != "" {
				o = append(o, otlptracegrpc.WithEndpointURL(base))
			}
			if e.spans, err = otlptracegrpc.New(ctx, o...); err != nil {
				return e, fmt.Errorf("telemetry: otlp traces: %w", err)
			}
		}
		if metrics {
			var o []otlpmetricgrpc.Option
			if base != "" {
				o = append(o, otlpmetricgrpc.WithEndpointURL(base))
			}
			if e.metrics, err = otlpmetricgrpc.New(ctx, o...); err != nil {
				return e, fmt.Errorf("telemetry: otlp metrics: %w", err)
			}
		}
	case "http/protobuf", "http":
		// The base URL gets the signal's path, as OTEL_EXPORTER_OTLP_ENDPOINT does.
		if traces {
			var o []otlptracehttp.Option
			if base != "" {
				o = append(o, otlptracehttp.WithEndpointURL(base+"/v1/traces"))
			}
			if e.spans, err = otlptracehttp.New(ctx, o...); err != nil {
				return e, fmt.Errorf("telemetry: otlp traces: %w", err)
			}
		}
		if metrics {
			var o []otlpmetrichttp.Option
			if base != "" {
				o = append(o, otlpmetrichttp.WithEndpointURL(base+"/v1/metrics"))
			}
			if e.metrics, err = otlpmetrichttp.New(ctx, o...); err != nil {
				return e, fmt.Errorf("telemetry: otlp metrics: %w", err)
			}
		}
	default:
		return e, fmt.Errorf("telemetry.otlp_protocol: %q is not grpc or http/protobuf", proto)
	}
	return e, nil
}

// errorLog logs the SDK's errors (an unreachable collector) at most once a minute: an
// outage of the collector must not flood the gateway's log.
func errorLog(log *slog.Logger) otel.ErrorHandler {
	var last atomic.Int64
	return otel.ErrorHandlerFunc(func(err error) {
		now := time.Now().UnixNano()
		if log == nil || now-last.Load() < int64(time.Minute) {
			return
		}
		last.Store(now)
		log.Warn("telemetry export failed", "err", err.Error())
	})
}
