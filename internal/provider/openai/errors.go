package openai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
	wire "github.com/sluice-gw/sluice/internal/schema/openai"
)

// errorBody holds the shapes error bodies come in: OpenAI's {"error":{...}} (wire.ErrorResponse), a flat
// {"message":...}, and FastAPI's {"detail":"..."} (vLLM and other Python servers).
type errorBody struct {
	Error   json.RawMessage `json:"error"`
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Detail  json.RawMessage `json:"detail"`
}

// parseErrorBody extracts the error object of a body; the zero value when it has none.
func parseErrorBody(b []byte) wire.Error {
	var eb errorBody
	if json.Unmarshal(b, &eb) != nil {
		return wire.Error{}
	}
	var we wire.Error
	if len(eb.Error) > 0 && eb.Error[0] == '{' && json.Unmarshal(eb.Error, &we) == nil {
		return we
	}
	if len(eb.Error) > 0 && eb.Error[0] == '"' { // {"error": "text"}
		json.Unmarshal(eb.Error, &we.Message)
		return we
	}
	we.Message, we.Type, we.Code = eb.Message, eb.Type, eb.Code
	if we.Message == "" && len(eb.Detail) > 0 && eb.Detail[0] == '"' {
		json.Unmarshal(eb.Detail, &we.Message)
	}
	return we
}

// rawText returns a raw JSON string's text, a number as written, "" for null or anything else.
func rawText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return string(raw)
	}
	return ""
}

// origin is the upstream an answer comes from: its name, which errors start with, and the
// scrubber of what it writes in them. Every error built from an upstream's words goes
// through statusError or inStreamError, which scrub it, so no later path (the client's
// error, attempt reasons, logs, spans) can carry the gateway's credentials (issue 19).
type origin struct {
	name  string
	scrub llm.Scrub
}

// statusError maps a non-2xx answer before the stream to an *llm.Error, scrubbed.
func (c *conn) statusError(se *statusError) *llm.Error {
	we := parseErrorBody(se.body)
	e := &llm.Error{Status: se.status, Code: rawText(we.Code), Type: we.Type, Param: rawText(we.Param)}
	msg := we.Message
	if msg == "" {
		// A plain-text body is the message; JSON without one, or an HTML page from a
		// proxy, is not.
		msg = strings.TrimSpace(string(se.body[:min(len(se.body), 512)]))
		if strings.HasPrefix(msg, "{") || strings.HasPrefix(msg, "<") || !utf8.ValidString(msg) {
			msg = ""
		}
	}
	if msg == "" {
		msg = http.StatusText(se.status)
	}
	switch s := se.status; {
	case s == 400 || s == 404 || s == 413 || s == 422:
		// The request is wrong: the client gets the upstream's status and message, since
		// another model would refuse it too.
		e.Kind, e.Message = llm.Invalid, msg
	case s == 401 || s == 403:
		// Never the upstream's message: OpenAI's 401 echoes the (masked) key.
		e.Kind = llm.Auth
		e.Message = fmt.Sprintf("%s refused the gateway's credentials (HTTP %d)", c.name, s)
	case s == 429:
		e.Kind, e.RetryAfter = llm.RateLimited, retryAfter(se.header, time.Now())
		e.Message = fmt.Sprintf("%s rate limit (HTTP 429): %s", c.name, msg)
	default:
		// 408, 409, 5xx, and anything unexpected (402, 3xx): the upstream's failure, not the
		// request's, so the chain may fall back.
		e.Kind = llm.Unavailable
		e.Message = fmt.Sprintf("%s answered HTTP %d: %s", c.name, s, msg)
	}
	return c.scrub.Error(e)
}

// retryAfter parses retry-after-ms (OpenAI, milliseconds), else Retry-After
// (transport.RetryAfter); 0 when absent or unparseable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	return transport.RetryAfter(h, now)
}

// inStreamError maps a provider error sent inside a 200 answer. Whatever its code, it is the
// upstream failing (Groq sends status_code 400 for its own tool-call validation), so it is
// Unavailable, or RateLimited when it says so: a rate limit, or insufficient_quota, which
// OpenAI otherwise answers with HTTP 429 (and which a Responses stream sends in-band). The
// error is scrubbed.
func (o origin) inStreamError(we wire.Error) *llm.Error {
	code := rawText(we.Code)
	e := &llm.Error{Kind: llm.Unavailable, Code: code, Type: we.Type, Param: rawText(we.Param)}
	if strings.Contains(code, "rate_limit") || strings.Contains(we.Type, "rate_limit") || we.StatusCode == 429 || code == "429" ||
		code == "insufficient_quota" {
		e.Kind = llm.RateLimited
	}
	msg := we.Message
	if msg == "" {
		msg = "error event without a message"
	}
	e.Message = o.name + " stream error: " + msg
	return o.scrub.Error(e)
}
