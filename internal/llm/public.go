package llm

import "errors"

// Public is what a client may see of err: its kind's type and code, and a message with no
// secret. Errors that are not *Error are bugs: their text stays in the log.
func Public(err error) Error {
	var le *Error
	if !errors.As(err, &le) {
		return Error{Kind: Internal, Type: "server_error", Code: "internal_error",
			Message: "The gateway failed to process the request."}
	}
	e := *le
	e.Message = le.Error()
	if e.Kind == Auth {
		e.Message = le.Target + ": the provider refused the gateway's credentials (a gateway configuration problem, not your API key)"
	}
	if e.Type == "" {
		switch e.Kind {
		case Invalid, NotFound, TooLarge, Unauthenticated:
			e.Type = "invalid_request_error"
		case RateLimited:
			e.Type = "rate_limit_error"
		case Refused:
			e.Type = "invalid_request_error"
		default:
			e.Type = "server_error"
		}
	}
	if e.Code == "" {
		switch e.Kind {
		case NotFound:
			e.Code = "model_not_found"
		case TooLarge:
			e.Code = "request_too_large"
		case Unauthenticated:
			e.Code = "invalid_api_key"
		case Timeout:
			e.Code = "upstream_timeout"
		case Truncated:
			e.Code = "upstream_truncated"
		case Auth:
			e.Code = "upstream_auth_failed"
		case Unavailable:
			e.Code = "upstream_error"
		case RateLimited:
			e.Code = "rate_limit_exceeded"
		}
	}
	return e
}
