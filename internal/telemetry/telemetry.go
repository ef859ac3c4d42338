package telemetry

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// scope names the instrumentation: the gateway's own spans and metrics.
const scope = "github.com/sluice-gw/sluice"

// Options configure a Telemetry. The zero value records through the process's providers:
// the SDK Setup installed, or the OpenTelemetry API's no-op ones when it did not run (tests
// need no setup).
type Options struct {
	// TracerProvider and MeterProvider record the spans and metrics; nil: the global ones.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// Metrics serves GET /metrics (the Prometheus exposition); nil: the one Setup installed,
	// if any.
	Metrics http.Handler
	// CaptureContent records prompts and completions in spans (telemetry.capture_content).
	CaptureContent bool
	// Models are the aliases and configured targets: the only model names a metric label
	// takes as they are (a direct "provider/model" call can name any model; see label).
	Models []string
	// Providers maps a configured provider's name to its gen_ai.provider.name ("openai",
	// "anthropic", or its own name for other kinds).
	Providers map[string]string
	// Window is how far back /admin/stats looks (default 15 minutes).
	Window time.Duration
	// Record hands each request of the route table (Access.Wire set), complete, to the
	// request log; it must not block, and must copy what it keeps. nil: no log.
	Record func(in *Access)
}

// DefaultWindow is the span of /admin/stats when Options.Window is zero.
const DefaultWindow = 15 * time.Minute

// Telemetry records what requests did: spans, metrics and the in-process statistics of
// /admin/stats. Safe for concurrent use; one per server.
type Telemetry struct {
	tracer    trace.Tracer
	inst      instruments
	metrics   http.Handler
	content   bool
	known     map[string]bool
	providers map[string]string
	record    func(*Access) // the request log (Options.Record)
	stats     *Stats
	sets      labelSets
}

// New returns a Telemetry for o.
func New(o Options) *Telemetry {
	tp, mp := o.TracerProvider, o.MeterProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	t := &Telemetry{tracer: tp.Tracer(scope), inst: newInstruments(mp.Meter(scope)), metrics: o.Metrics,
		content: o.CaptureContent, known: map[string]bool{}, providers: o.Providers, stats: NewStats(o.Window, nil),
		record: o.Record}
	for _, m := range o.Models {
		t.known[m] = true
	}
	return t
}

var processTelemetry = sync.OnceValue(func() *Telemetry { return New(Options{}) })

// Default is the process's Telemetry, for hooks called outside any request (a Redis error
// of a background task). Its instruments follow the global providers, whenever Setup runs.
func Default() *Telemetry { return processTelemetry() }

// processMetrics is the Prometheus handler Setup installed; nil when it is off.
var processMetrics atomic.Pointer[http.Handler]

// Metrics is the handler of GET /metrics: Options.Metrics, else the one Setup installed;
// nil when Prometheus is off.
func (t *Telemetry) Metrics() http.Handler {
	if t.metrics != nil {
		return t.metrics
	}
	if h := processMetrics.Load(); h != nil {
		return *h
	}
	return nil
}

// Stats returns the in-process statistics /admin/stats reads.
func (t *Telemetry) Stats() *Stats { return t.stats }

// label bounds a model or target name for a metric label: the configured ones pass, any
// other becomes "other", keeping a configured provider ("openai/other"). A metric label never
// holds what a client chose freely (DESIGN §10: bounded label sets).
func (t *Telemetry) label(name string) string {
	if name == "" || t.known[name] {
		return name
	}
	if p, _, ok := strings.Cut(name, "/"); ok {
		if _, ok := t.providers[p]; ok {
			return p + "/other"
		}
	}
	return "other"
}

// provider is the gen_ai.provider.name of target "provider/model".
func (t *Telemetry) provider(target string) string {
	p, _, _ := strings.Cut(target, "/")
	if name, ok := t.providers[p]; ok {
		return name
	}
	if p == "" {
		return ""
	}
	return "other"
}

type telemetryKey struct{}

// Context returns ctx carrying t, for work outside any request (a background publish to
// Redis) whose hooks must record on t rather than the process's Telemetry.
func (t *Telemetry) Context(ctx context.Context) context.Context {
	return context.WithValue(ctx, telemetryKey{}, t)
}

// from is the Telemetry of the request ctx belongs to, else the one ctx carries, else the
// process's.
func from(ctx context.Context) *Telemetry {
	if rq, ok := ctx.Value(requestKey{}).(*Request); ok {
		return rq.t
	}
	if t, ok := ctx.Value(telemetryKey{}).(*Telemetry); ok {
		return t
	}
	return Default()
}
