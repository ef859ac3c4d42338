// Package realtime is the OpenAI Realtime client wire (GET /v1/realtime over a WebSocket,
// issue 48): Decode checks the upgrade and reads the model from the query before anything
// is dialed, so that a refusal is a plain HTTP error in OpenAI's shape; Serve upgrades the
// client's connection and carries the session's events both ways between it and an
// upstream session (llm.RealtimeConn). Text and transcript deltas pass through a redaction
// window per stream (their .done events carry the masked whole text), each response.done's
// usage goes to Options.Turn, which may end the session (a budget spent: an error event,
// then a clean close); every other event passes unchanged. It never picks a target: the
// caller dials the upstream first (package live).
package realtime

import (
	"net/http"
	"strings"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/llm"
)

// Path is the route of the wire.
const Path = "/v1/realtime"

// API is the Realtime wire. A browser cannot set headers on a WebSocket: it carries its key
// in the openai-insecure-api-key.KEY subprotocol instead (dialect.Subprotocol).
var API = dialect.API{
	Name:       "realtime",
	Routes:     []dialect.Route{{Method: http.MethodGet, Path: Path, Op: dialect.Realtime}},
	Credential: dialect.Bearer | dialect.Subprotocol,
	Decode:     Decode,
	Error:      oai.Error,
}

// Decode reads the session's model from the query: model (an alias or provider/model), or
// deployment, as Azure OpenAI's clients name it. It refuses a request that is not a
// WebSocket upgrade (426) and one that names no model (400), in OpenAI's error shape,
// before any upstream is dialed.
func Decode(_ []byte, in dialect.Input) (*dialect.Decoded, error) {
	if err := upgrade(in.Header); err != nil {
		return nil, err
	}
	model := strings.TrimSpace(in.Query("model"))
	if model == "" {
		model = strings.TrimSpace(in.Query("deployment"))
	}
	if model == "" {
		e := oai.Invalid("model", "Missing required parameter: 'model' (the query of "+Path+"?model=...).")
		e.Code = "missing_required_parameter"
		return nil, e
	}
	return &dialect.Decoded{Model: model, Req: &llm.Request{Model: model, Stream: true}}, nil
}

// upgrade checks the headers of a WebSocket handshake (RFC 6455 §4.2.1), which the upgrade
// would refuse later in plain text.
func upgrade(header func(string) string) error {
	if header == nil || !token(header("Upgrade"), "websocket") || !token(header("Connection"), "upgrade") {
		return &llm.Error{Kind: llm.Invalid, Status: http.StatusUpgradeRequired, Type: "invalid_request_error", Code: "upgrade_required",
			Message: "GET " + Path + " is a WebSocket endpoint: open it with a WebSocket client (Upgrade: websocket)."}
	}
	if header("Sec-WebSocket-Version") != "13" || strings.TrimSpace(header("Sec-WebSocket-Key")) == "" {
		return &llm.Error{Kind: llm.Invalid, Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_handshake",
			Message: "The WebSocket handshake needs Sec-WebSocket-Version: 13 and a Sec-WebSocket-Key."}
	}
	return nil
}

// token reports whether the comma-separated header value v holds want, case-insensitively.
func token(v, want string) bool {
	for t := range strings.SplitSeq(v, ",") {
		if strings.EqualFold(strings.TrimSpace(t), want) {
			return true
		}
	}
	return false
}

// betaProtocol is the subprotocol by which a browser asks for the beta shape of the events
// (it cannot send the OpenAI-Beta header).
const betaProtocol = "openai-beta.realtime-v1"

// Beta is the OpenAI-Beta the client asks the upstream for: its header, else "realtime=v1"
// when it offered the openai-beta.realtime-v1 subprotocol; "": the GA shape.
func Beta(r *http.Request) string {
	if b := r.Header.Get("OpenAI-Beta"); b != "" {
		return b
	}
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			if strings.TrimSpace(p) == betaProtocol {
				return "realtime=v1"
			}
		}
	}
	return ""
}
