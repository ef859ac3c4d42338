package transport

import (
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sluice-gw/sluice/internal/llm"
)

// StatusKind is the kind of a non-2xx answer before the stream (DESIGN §3), the same for
// every wire: the request is wrong (400, 404, 413, 422: Invalid, since another model would
// refuse it too), the gateway's credentials are (401, 403: Auth), a rate limit (429:
// RateLimited), else the upstream failing (408, 409, 5xx, anything unexpected such as 402 or
// 3xx: Unavailable), so the chain may fall back. An adapter whose upstream says otherwise
// in its own words (Gemini's 400 for a bad key, Bedrock's 429 for a model not ready)
// decides that before.
func StatusKind(status int) llm.Kind {
	switch status {
	case 400, 404, 413, 422:
		return llm.Invalid
	case 401, 403:
		return llm.Auth
	case 429:
		return llm.RateLimited
	}
	return llm.Unavailable
}

// StatusError is the *llm.Error of kind for a non-2xx answer of provider name before the
// stream, for the adapter to complete with its wire's Type, Code and Param and to scrub.
// label names the answer in messages ("HTTP 429", or with the wire's error type after it);
// msg is the upstream's words (ErrorMessage); retry is when it said to come back, kept for
// RateLimited and Unavailable. Invalid carries the upstream's words as they are, for the
// client; Auth never does: the gateway's credentials are not the client's business, and
// the words may quote them.
func StatusError(name string, kind llm.Kind, status int, label, msg string, retry time.Duration) *llm.Error {
	e := &llm.Error{Kind: kind, Status: status}
	switch kind {
	case llm.Invalid:
		e.Message = msg
	case llm.Auth:
		e.Message = fmt.Sprintf("%s refused the gateway's credentials (%s)", name, label)
	case llm.RateLimited:
		e.RetryAfter = retry
		e.Message = fmt.Sprintf("%s rate limit (%s): %s", name, label, msg)
	default:
		e.RetryAfter = retry
		e.Message = fmt.Sprintf("%s answered %s: %s", name, label, msg)
	}
	return e
}

// ErrorMessage is the message of an error body: parsed, what the wire's own parse found,
// else the body itself when it is plain text (JSON without a message, or an HTML page from
// a proxy, is not), else the status's text; "" only for a status without one (529).
func ErrorMessage(parsed string, body []byte, status int) string {
	if parsed != "" {
		return parsed
	}
	if m := plainText(body); m != "" {
		return m
	}
	return http.StatusText(status)
}

// plainText is the start of body (512 bytes) when it reads as a message: "" for JSON, an
// HTML page or bytes that are not UTF-8.
func plainText(body []byte) string {
	m := strings.TrimSpace(string(body[:min(len(body), 512)]))
	if strings.HasPrefix(m, "{") || strings.HasPrefix(m, "<") || !utf8.ValidString(m) {
		return ""
	}
	return m
}
