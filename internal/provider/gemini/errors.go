package gemini

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/transport"
	"github.com/sluice-gw/sluice/internal/schema/gemini"
)

// origin is the upstream an answer comes from: its name and the scrubber of what it writes
// in its errors, which statusError and streamError apply (issue 19).
type origin struct {
	name  string
	scrub llm.Scrub
}

// parseStatus is the google.rpc.Status of an error body, nil when it has none.
func parseStatus(b []byte) *gemini.Status {
	var eb gemini.ErrorBody
	if json.Unmarshal(b, &eb) != nil || eb.Error == nil {
		return nil
	}
	return eb.Error
}

// retryDelay is the RetryInfo of an error body's details ("retryDelay": "37s"), 0 if none.
func retryDelay(b []byte) time.Duration {
	var eb struct {
		Error struct {
			Details []struct {
				Type       string `json:"@type"`
				RetryDelay string `json:"retryDelay"`
			} `json:"details"`
		} `json:"error"`
	}
	json.Unmarshal(b, &eb)
	for _, d := range eb.Error.Details {
		if strings.HasSuffix(d.Type, "google.rpc.RetryInfo") {
			if v, err := time.ParseDuration(d.RetryDelay); err == nil && v > 0 {
				return v
			}
		}
	}
	return 0
}

// badKey reports an error body that refuses the API key: the Gemini API answers a wrong key
// with 400 INVALID_ARGUMENT, reason API_KEY_INVALID, which is the gateway's configuration
// and not the client's request.
func badKey(b []byte) bool {
	return strings.Contains(string(b), "API_KEY_INVALID") || strings.Contains(string(b), "API key not valid")
}

// statusError maps a non-2xx answer before the stream, scrubbed. The canonical status
// (INVALID_ARGUMENT, RESOURCE_EXHAUSTED, ...) is kept as Type.
func (o origin) statusError(status int, h http.Header, body []byte) *llm.Error {
	st := parseStatus(body)
	if st == nil {
		st = &gemini.Status{}
		if m := strings.TrimSpace(string(body[:min(len(body), 512)])); !strings.HasPrefix(m, "{") && !strings.HasPrefix(m, "<") && utf8.ValidString(m) {
			st.Message = m
		}
	}
	msg := st.Message
	if msg == "" {
		msg = http.StatusText(status)
	}
	e := &llm.Error{Status: status, Type: st.Status}
	switch {
	case status == 401 || status == 403 || status == 400 && badKey(body):
		e.Kind = llm.Auth
		e.Message = fmt.Sprintf("%s refused the gateway's credentials (HTTP %d %s)", o.name, status, st.Status)
	case status == 400 || status == 404 || status == 413 || status == 422:
		e.Kind, e.Message = llm.Invalid, msg
	case status == 429:
		e.Kind, e.RetryAfter = llm.RateLimited, retryAfter(h, body)
		e.Message = fmt.Sprintf("%s rate limit (HTTP 429 %s): %s", o.name, st.Status, msg)
	default:
		e.Kind, e.RetryAfter = llm.Unavailable, retryAfter(h, body)
		e.Message = fmt.Sprintf("%s answered HTTP %d %s: %s", o.name, status, st.Status, msg)
	}
	return o.scrub.Error(e)
}

func retryAfter(h http.Header, body []byte) time.Duration {
	if d := transport.RetryAfter(h, time.Now()); d > 0 {
		return d
	}
	return retryDelay(body)
}

// streamError maps an error inside a 200 stream: whatever its code, the upstream failing
// mid-answer (DESIGN §3), so before commit the chain falls back: RateLimited for 429 /
// RESOURCE_EXHAUSTED, Auth (without the upstream's words) for 401 / 403, Unavailable else.
func (o origin) streamError(st *gemini.Status) *llm.Error {
	e := &llm.Error{Kind: llm.Unavailable, Type: st.Status}
	msg := st.Message
	if msg == "" {
		msg = "error without a message"
	}
	switch {
	case st.Code == 429 || st.Status == "RESOURCE_EXHAUSTED":
		e.Kind = llm.RateLimited
	case st.Code == 401 || st.Code == 403 || st.Status == "UNAUTHENTICATED" || st.Status == "PERMISSION_DENIED":
		e.Kind = llm.Auth
		e.Message = fmt.Sprintf("%s refused the gateway's credentials (%s)", o.name, st.Status)
		return o.scrub.Error(e)
	}
	e.Message = o.name + " stream error: " + msg
	return o.scrub.Error(e)
}
