package anthropic

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
	wire "github.com/sluice-gw/sluice/internal/schema/anthropic"
)

// parseErrorBody extracts the error object of a body: Anthropic's shape (wire.ErrorResponse), a proxy's
// {"error":"text"} or flat {"message":...}; the zero value when it has none.
func parseErrorBody(b []byte) wire.Error {
	var eb struct {
		Type    string          `json:"type"`
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(b, &eb) != nil {
		return wire.Error{}
	}
	var we wire.Error
	switch {
	case len(eb.Error) > 0 && eb.Error[0] == '{':
		json.Unmarshal(eb.Error, &we)
	case len(eb.Error) > 0 && eb.Error[0] == '"':
		json.Unmarshal(eb.Error, &we.Message)
	default:
		we.Message = eb.Message
		if eb.Type != "error" {
			we.Type = eb.Type
		}
	}
	return we
}

// origin is the upstream an answer comes from: its name, which errors start with, and the
// scrubber of what it writes in them. Every error built from an upstream's words goes
// through statusError or streamError, which scrub it, so no later path (the client's error,
// attempt reasons, logs, spans) can carry the gateway's credentials (issue 19).
type origin struct {
	name  string
	scrub llm.Scrub
}

// statusError maps a non-2xx answer before the stream to an *llm.Error, scrubbed. The
// upstream's error type (invalid_request_error, overloaded_error, ...) is kept as Type.
func (c *Client) statusError(status int, h http.Header, body []byte) *llm.Error {
	we := parseErrorBody(body)
	e := &llm.Error{Status: status, Type: we.Type}
	msg := we.Message
	if msg == "" {
		// A plain-text body is the message; JSON without one, or an HTML page from a
		// proxy, is not.
		msg = strings.TrimSpace(string(body[:min(len(body), 512)]))
		if strings.HasPrefix(msg, "{") || strings.HasPrefix(msg, "<") || !utf8.ValidString(msg) {
			msg = ""
		}
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	if msg == "" {
		msg = we.Type // 529 has no standard text
	}
	switch s := status; {
	case s == 400 || s == 404 || s == 413 || s == 422:
		// The request is wrong: the client gets the upstream's status and message, since
		// another model would refuse it too.
		e.Kind, e.Message = llm.Invalid, msg
	case s == 401 || s == 403:
		// Never the upstream's message: the gateway's credentials are not the client's
		// business, and a message may quote them.
		e.Kind = llm.Auth
		e.Message = fmt.Sprintf("%s refused the gateway's credentials (HTTP %d)", c.name, s)
	case s == 429:
		e.Kind, e.RetryAfter = llm.RateLimited, transport.RetryAfter(h, time.Now())
		e.Message = fmt.Sprintf("%s rate limit (HTTP 429): %s", c.name, msg)
	default:
		// 408, 409, 5xx and 529 (overloaded), and anything unexpected: the upstream's failure,
		// not the request's, so the chain may fall back. Anthropic may say when to come back.
		e.Kind, e.RetryAfter = llm.Unavailable, transport.RetryAfter(h, time.Now())
		e.Message = fmt.Sprintf("%s answered HTTP %d: %s", c.name, s, msg)
	}
	return c.scrub.Error(e)
}

// streamError maps an error event inside a 200 stream (or a JSON error with status 200).
// DESIGN §3: whatever its type, it is the upstream failing mid-answer, so the chain may fall
// back before commit: Unavailable, except rate_limit_error (RateLimited) and the credential
// errors (Auth, without the upstream's message). invalid_request_error too is Unavailable: a
// request Anthropic refuses up front comes as HTTP 400, which is Invalid. The error is
// scrubbed.
func (o origin) streamError(we wire.Error) *llm.Error {
	e := &llm.Error{Kind: llm.Unavailable, Type: we.Type}
	msg := we.Message
	if msg == "" {
		msg = "error event without a message"
	}
	switch we.Type {
	case "rate_limit_error":
		e.Kind = llm.RateLimited
	case "authentication_error", "permission_error":
		e.Kind = llm.Auth
		e.Message = fmt.Sprintf("%s refused the gateway's credentials (%s)", o.name, we.Type)
		return o.scrub.Error(e)
	}
	e.Message = o.name + " stream error: " + msg
	return o.scrub.Error(e)
}
