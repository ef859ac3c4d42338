package anthropic

import (
	"errors"
	"net/http"
	"strings"

	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// StatusOverloaded is Anthropic's status of an overloaded API: the answer when every target
// the gateway tried was overloaded.
const StatusOverloaded = 529

// Error is the status and the Anthropic error body of err answered before the first byte:
// {"type":"error","error":{"type":...,"message":...}}, with the type Anthropic gives the
// status (invalid_request_error 400, authentication_error 401, permission_error 403,
// not_found_error 404, request_too_large 413, rate_limit_error 429, api_error 5xx,
// overloaded_error 529). overloaded says every attempt failed as overloaded: the exhausted
// chain's 502 is then Anthropic's 529, which its SDKs retry.
func Error(err error, overloaded bool) (int, []byte) {
	status := llm.HTTPStatus(err)
	if overloaded && status == http.StatusBadGateway {
		status = StatusOverloaded
	}
	return status, ErrorBody(err, errorType(status))
}

// ErrorBody is the error body of err with type typ.
func ErrorBody(err error, typ string) []byte {
	e := llm.Public(err)
	b := append([]byte(nil), `{"type":"error","error":{"type":`...)
	b = oai.AppendString(b, typ)
	b = append(b, `,"message":`...)
	b = oai.AppendString(b, e.Message)
	return append(b, `}}`...)
}

// errorType is Anthropic's error type of an HTTP status.
func errorType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case StatusOverloaded:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// inbandType is the type of an error event after commit: the upstream's own when it was an
// Anthropic error type (overloaded_error), else the type of the status the failure would
// have had before the first byte.
func inbandType(err error) string {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if le, ok := e.(*llm.Error); ok {
			switch le.Type {
			case "overloaded_error", "api_error", "rate_limit_error":
				return le.Type // the upstream's, under the gateway's wrapping
			}
		}
	}
	return errorType(llm.HTTPStatus(err))
}

// Overloaded reports whether an attempt's failure was an overloaded upstream: Anthropic's
// 529 or its overloaded_error event.
func Overloaded(a llm.Attempt) bool {
	return a.Status == StatusOverloaded || strings.Contains(a.Reason, "overloaded_error")
}

// AllOverloaded reports whether every attempt of a chain failed as overloaded (Error's
// overloaded: the 529 Anthropic's SDKs retry).
func AllOverloaded(tries []llm.Attempt) bool {
	for _, a := range tries {
		if !Overloaded(a) {
			return false
		}
	}
	return len(tries) > 0
}
