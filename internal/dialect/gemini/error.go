package gemini

import (
	"net/http"

	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
	wire "github.com/sluice-gw/sluice/internal/schema/gemini"
)

// invalid is a 400 INVALID_ARGUMENT in Google's words.
func invalid(msg string) *llm.Error {
	return &llm.Error{Kind: llm.Invalid, Status: http.StatusBadRequest, Type: "invalid_request_error", Message: msg}
}

// notFound is the 404 of a path that names no method the gateway serves.
func notFound(msg string) *llm.Error {
	return &llm.Error{Kind: llm.Invalid, Status: http.StatusNotFound, Type: "invalid_request_error", Code: "method_not_found",
		Message: msg}
}

// Error is the status and the Google error body of err answered before the first byte.
func Error(err error) (int, []byte) {
	status := llm.HTTPStatus(err)
	return status, ErrorBody(err, status)
}

// ErrorBody is Google's error body of err with HTTP status code: {"error":{"code","message",
// "status","details"}}, status the canonical name of the code (google.rpc.Code), and details
// one google.rpc.ErrorInfo whose reason is the gateway's error code (model_not_allowed,
// rate_limit_exceeded, ...), as Google's own errors give theirs (API_KEY_INVALID).
func ErrorBody(err error, code int) []byte {
	e := llm.Public(err)
	if e.Kind == llm.Unauthenticated {
		// The gate's words name the OpenAI and Anthropic places; Google's SDKs use another.
		e.Message += " This wire also takes the key in x-goog-api-key or as ?key=."
	}
	b := append([]byte(nil), `{"error":{"code":`...)
	b = appendInt(b, code)
	b = append(b, `,"message":`...)
	b = oai.AppendString(b, e.Message)
	b = append(b, `,"status":`...)
	b = oai.AppendString(b, Status(code))
	if e.Code != "" {
		b = append(b, `,"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":`...)
		b = oai.AppendString(b, e.Code)
		b = append(b, `,"domain":"sluice"}]`...)
	}
	return append(b, `}}`...)
}

func appendInt(b []byte, n int) []byte {
	if n < 0 {
		b, n = append(b, '-'), -n
	}
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

// Status is the canonical code Google names an HTTP status by (schema/gemini.StatusOf).
func Status(code int) string { return wire.StatusOf(code) }
