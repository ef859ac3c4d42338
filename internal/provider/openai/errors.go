package openai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

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
	kind := transport.StatusKind(se.status)
	var retry time.Duration
	if kind == llm.RateLimited { // this adapter never kept a 5xx's Retry-After
		retry = retryAfter(se.header, time.Now())
	}
	e := transport.StatusError(c.name, kind, se.status, fmt.Sprintf("HTTP %d", se.status),
		transport.ErrorMessage(we.Message, se.body, se.status), retry)
	e.Code, e.Type, e.Param = rawText(we.Code), we.Type, rawText(we.Param)
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
