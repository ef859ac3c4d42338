package llm

import "errors"

// Midstream is the error of target failing after the answer started reaching the client:
// the in-band error of a stream, for every client wire. It keeps err's kind, says what the
// target reported (its code or type, and message), and has a code a client can branch on:
// upstream_truncated, upstream_timeout, else upstream_error. A credential failure says no
// more than that (the provider's message may quote the gateway's key).
func Midstream(target string, err error) error {
	k := KindOf(err)
	msg := target + " failed after the answer started"
	var le *Error
	if errors.As(err, &le) {
		detail := le.Message
		if le.Code != "" {
			detail = le.Code + ": " + detail
		} else if le.Type != "" {
			detail = le.Type + ": " + detail
		}
		if detail != "" && le.Kind != Auth {
			msg += ": " + detail
		}
	}
	code := "upstream_error"
	switch k {
	case Truncated:
		code = "upstream_truncated"
	case Timeout:
		code = "upstream_timeout"
	}
	return &Error{Kind: k, Type: "server_error", Code: code, Message: msg, Err: err}
}
