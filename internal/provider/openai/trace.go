package openai

import (
	"net/http"

	"github.com/openai/openai-go/v3/option"
	"go.opentelemetry.io/otel/propagation"
)

// traceContext carries the request's trace to the provider (W3C traceparent and tracestate;
// DESIGN §7), whatever HTTP client carries the call: its spans, if it records any, join the
// caller's trace. Only the W3C headers, never baggage, which is the client's and not the
// provider's business. The context holds the gateway's server span (package telemetry), so
// the provider's span is a child of it.
func traceContext(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	propagation.TraceContext{}.Inject(req.Context(), propagation.HeaderCarrier(req.Header))
	return next(req)
}
