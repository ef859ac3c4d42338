package anthropic

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

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
	msg := transport.ErrorMessage(we.Message, body, status)
	if msg == "" {
		msg = we.Type // 529 (overloaded) has no standard text
	}
	// 529 is Unavailable, as any status the table does not know: Anthropic overloaded, so
	// the chain may fall back. Anthropic may say when to come back.
	e := transport.StatusError(c.name, transport.StatusKind(status), status, fmt.Sprintf("HTTP %d", status), msg,
		transport.RetryAfter(h, time.Now()))
	e.Type = we.Type
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
