package gemini

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

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
	var parsed, typ string
	if st := parseStatus(body); st != nil {
		parsed, typ = st.Message, st.Status
	}
	kind := transport.StatusKind(status)
	if status == 400 && badKey(body) {
		kind = llm.Auth
	}
	e := transport.StatusError(o.name, kind, status, fmt.Sprintf("HTTP %d %s", status, typ),
		transport.ErrorMessage(parsed, body, status), retryAfter(h, body))
	e.Type = typ
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
