package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/console"
	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/playground"
	"github.com/sluice-gw/sluice/internal/server"
)

// open are the routes served without a key: probes, the scrape target, the static pages,
// the console (its pages are static, and its session signs in with the admin token:
// internal/console's tests hold it), and each path's CORS preflight (browsers send it
// without the key).
func open(r *echo.Route) bool {
	switch {
	case r.Method == http.MethodOptions, r.Method == echo.RouteNotFound:
		return true
	case r.Path == "/healthz", r.Path == "/readyz", r.Path == "/metrics", r.Path == "/":
		return true
	}
	return strings.HasPrefix(r.Path, playground.Prefix) || r.Path == "/console" || strings.HasPrefix(r.Path, console.Prefix)
}

// fastBodies are requests naming the model "fast", which the test's key may not use, one per
// model route: whoever adds a wire adds its body here.
var fastBodies = map[string]string{
	"/v1/chat/completions":      chatBody("fast", false, ""),
	"/v1/responses":             `{"model":"fast","input":"hi"}`,
	"/v1/messages":              `{"model":"fast","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`,
	"/v1/messages/count_tokens": `{"model":"fast","messages":[{"role":"user","content":"hi"}]}`,
	"/v1/embeddings":            `{"model":"emb","input":"hi"}`,
	"/v1/moderations":           `{"model":"sim/moderation","input":"hi"}`,
	"/v1/images/generations":    `{"model":"sim/image","prompt":"a lighthouse"}`,
	"/v1/rerank":                `{"model":"sim/rerank","query":"q","documents":["d"]}`,
	"/v1/audio/speech":          `{"model":"sim/speech","input":"hi","voice":"alloy"}`,
	"/v1/audio/transcriptions":  formBody("model", "sim/transcribe", "file"),
	"/v1/images/edits":          formBody("model", "sim/image", "prompt", "a lighthouse", "image"),
	"/v1/ui/chat":               `{"id":"c1","model":"fast","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"hi"}]}]}`,
	// Gemini's model is in the path: "*" is "fast:generateContent" (fastPath).
	"/v1beta/models/*": `{"contents":[{"parts":[{"text":"hi"}]}]}`,
	"/v1/models/*":     `{"contents":[{"parts":[{"text":"hi"}]}]}`,
	// Realtime's model is in the query (fastPath), its request a WebSocket handshake (fastHeader).
	"/v1/realtime": "",
}

// formBody is a multipart body (boundary "B") of the text fields kv (name, value pairs),
// then one small file for the last name, as fastHeader's content type says.
func formBody(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		b.WriteString("--B\r\nContent-Disposition: form-data; name=\"" + kv[i] + "\"\r\n\r\n" + kv[i+1] + "\r\n")
	}
	b.WriteString("--B\r\nContent-Disposition: form-data; name=\"" + kv[len(kv)-1] + "\"; filename=\"a.bin\"\r\n" +
		"Content-Type: application/octet-stream\r\n\r\nRIFF....\r\n--B--\r\n")
	return b.String()
}

// fastHeader is the content type of a multipart route's fastBodies request (none: JSON).
func fastHeader(path string) []string {
	if strings.HasPrefix(fastBodies[path], "--B") {
		return []string{"Content-Type", "multipart/form-data; boundary=B"}
	}
	if path == "/v1/realtime" {
		return []string{"Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}
	}
	return nil
}

// fastPath is the path of a model route's fastBodies request: a wildcard names the model
// "fast" and its method (Gemini's models/{model}:{method}).
func fastPath(path string) string {
	if path == "/v1/realtime" {
		return path + "?model=fast"
	}
	return strings.Replace(path, "*", "fast:generateContent", 1)
}

// TestRouteTable walks every route the server registered: with keys on, each but the named
// open ones refuses a missing and a wrong key (the admin API its token), in its wire's error
// format, with a server span and an access line; every route of the table is registered;
// and every model route admits the decoded request (a model the key may not use is a 403).
func TestRouteTable(t *testing.T) {
	good := auth.NewSecret()
	yaml := `
providers:
  sim: {kind: sim}
  local: {kind: openai-compatible, base_url: "http://127.0.0.1:9/v1"}
models:
  default: [sim/echo]
  fast: [sim/echo]
embeddings:
  emb: {targets: [local/text-embedding-3-small]}
auth: {admin_token: admin-` + good + `}
keys:
  - {name: team-a, hash: ` + auth.Hash(good) + `, models: [default]}
`
	var log logBuffer
	url, srv := serveServer(t, yaml, nil, time.Minute, &log)
	mem := recordTelemetry(srv)
	// A wrong token on every admin route: more than the throttle's 10 a minute (issue 47).
	server.SetThrottle(srv, auth.NewThrottle(auth.ThrottleOptions{Limit: 1 << 20}))

	routes := server.Routes(srv)
	registered := map[string]bool{}
	for _, r := range routes {
		registered[r.Method+" "+r.Path] = true
	}
	for _, api := range server.Wires {
		for _, rt := range api.Routes {
			if !registered[rt.Method+" "+rt.Path] {
				t.Errorf("%s: route %s %s of the table is not registered", api.Name, rt.Method, rt.Path)
			}
		}
	}

	walked := 0
	for _, r := range routes {
		if open(r) {
			continue
		}
		walked++
		path := strings.NewReplacer(":chatId", "c1", ":id", "key_1", "*", "x").Replace(r.Path)
		wantCode := "invalid_api_key"
		if strings.HasPrefix(r.Path, "/admin") {
			wantCode = "invalid_admin_token"
		}
		for _, key := range []string{"", auth.NewSecret()} {
			resp := do(t, r.Method, url+path, key, "{}")
			// In the wire's own format: OpenAI's code, Anthropic's error type, or Google's status.
			if resp.status != http.StatusUnauthorized || resp.errCode() != wantCode && !strings.Contains(string(resp.body), `"authentication_error"`) &&
				!strings.Contains(string(resp.body), `"UNAUTHENTICATED"`) {
				t.Errorf("%s %s with key %v: got %d %s, want 401 %s", r.Method, path, key != "", resp.status, resp.body, wantCode)
				continue
			}
			id := resp.header.Get("X-Request-Id")
			if line := logLine(&log, id); !strings.Contains(line, "status=401") || !strings.Contains(line, "path="+path) {
				t.Errorf("%s %s: access line %q, want one with status=401 and the path", r.Method, path, line)
			}
			if !spanNamed(mem, r.Method+" "+r.Path) {
				t.Errorf("%s %s: no server span %q", r.Method, path, r.Method+" "+r.Path)
			}
		}
	}
	if walked < 15 {
		t.Errorf("walked %d routes, want every route of the table and the admin API", walked)
	}

	for _, api := range server.Wires {
		for _, rt := range api.Routes {
			if !rt.Op.Models() {
				continue
			}
			body, ok := fastBodies[rt.Path]
			if !ok {
				t.Errorf("%s %s: no request in fastBodies", rt.Method, rt.Path)
				continue
			}
			resp := do(t, rt.Method, url+fastPath(rt.Path), good, body, fastHeader(rt.Path)...)
			if resp.status != http.StatusForbidden || !strings.Contains(string(resp.body), "model_not_allowed") && !strings.Contains(string(resp.body), `"permission_error"`) {
				t.Errorf("%s %s naming a model the key may not use: got %d %s, want 403 model_not_allowed", rt.Method, rt.Path, resp.status, resp.body)
			}
			if api.RequestID != "" && resp.header.Get(api.RequestID) == "" {
				t.Errorf("%s %s: no %s header", rt.Method, rt.Path, api.RequestID)
			}
		}
	}
	var ops = map[dialect.Op]bool{}
	for _, api := range server.Wires {
		for _, rt := range api.Routes {
			ops[rt.Op] = true
		}
	}
	for op := dialect.Call; op <= dialect.Object; op++ {
		if !ops[op] {
			t.Errorf("op %d is served by no route of the table", op)
		}
	}
}

// logLine is the access line of request id, "" when there is none.
func logLine(log *logBuffer, id string) string {
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.Contains(l, "id="+id) && strings.Contains(l, "path=") {
			return l
		}
	}
	return ""
}

// spanNamed reports whether a server span named name was recorded.
func spanNamed(m *memTelemetry, name string) bool {
	for _, s := range m.spans.Ended() {
		if s.Name() == name {
			return true
		}
	}
	return false
}
