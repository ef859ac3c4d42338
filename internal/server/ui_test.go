package server_test

import (
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

const uiConfig = `
providers:
  sim: {kind: sim}
models:
  default: [sim/echo]
  secret: ["sim/text?len=60&say=key+sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7+end"]
  tools: ["sim/tools?calls=1&say=Checking."]
  restart:
    targets: ["sim/text?len=80&fail=cut&after=3&say=FIRST&at=0", "sim/text?len=0&say=Second+answer."]
    on_midstream_failure: restart
  norestart: ["sim/text?len=80&fail=cut&after=3", "sim/text?len=20"]
  down: ["sim/text?fail=500"]
`

func TestUIChat(t *testing.T) {
	g := serveConfig(t, uiConfig, nil)
	defer g.Close()
	tests := []struct {
		name, model, proto string
		want               []string // chunk types, in order, each at least once
		text               string   // what the client keeps ("": not checked)
		not                []string // chunk types that must not come
	}{
		{"echo", "default", "", []string{"start", "start-step", "text-start", "text-delta", "text-end", "finish-step", "message-metadata", "finish", "[DONE]"}, "Hello, gateway.", nil},
		{"redacted", "secret", "", []string{"start", "text-delta", "finish", "[DONE]"}, "", nil},
		{"client tool", "tools", "", []string{"start", "text-delta", "tool-input-start", "tool-input-available", "finish-step", "finish", "[DONE]"}, "Checking.", nil},
		{"restart", "restart", "", []string{"start", "start-step", "text-delta", "reset-step", "text-start", "text-delta", "finish", "[DONE]"}, "Second answer.", []string{"error"}},
		{"restart v6", "restart", "v6", []string{"start", "text-delta", "data-restart", "text-start", "finish", "[DONE]"}, "", []string{"error", "reset-step"}},
		{"no restart", "norestart", "", []string{"start", "text-delta", "error", "finish", "[DONE]"}, "", []string{"reset-step"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := uiDo(t, timeout(t, 20*time.Second), "POST", g.URL+"/v1/ui/chat", "", uiBody("chat-"+strings.ReplaceAll(tt.name, " ", "-"), tt.model, "Hello, gateway."),
				"X-Sluice-Ui-Protocol", tt.proto)
			defer r.Body.Close()
			if r.StatusCode != 200 {
				b, _ := io.ReadAll(r.Body)
				t.Fatalf("got %d %s, want 200", r.StatusCode, b)
			}
			for h, want := range map[string]string{"Content-Type": "text/event-stream", "X-Vercel-Ai-Ui-Message-Stream": "v1",
				"X-Accel-Buffering": "no", "Cache-Control": "no-cache"} {
				if got := r.Header.Get(h); got != want {
					t.Errorf("got %s %q, want %q", h, got, want)
				}
			}
			if r.Header.Get("X-Sluice-Target") == "" {
				t.Errorf("got no X-Sluice-Target, want the served target")
			}
			frames := sseFrames(t, r.Body, -1)
			types := chunkTypes(t, frames)
			i := 0
			for _, ty := range types {
				if i < len(tt.want) && ty == tt.want[i] {
					i++
				}
				if slices.Contains(tt.not, ty) {
					t.Errorf("got a %s chunk, want none", ty)
				}
			}
			if i < len(tt.want) {
				t.Errorf("got %v, want %v in order", types, tt.want)
			}
			run := frameID(frames[0])[:strings.LastIndexByte(frameID(frames[0]), '-')]
			for n, f := range frames {
				if want := run + "-" + strconv.Itoa(n+1); frameID(f) != want {
					t.Errorf("frame %d: got id %q, want %q", n, frameID(f), want)
				}
			}
			if tt.text != "" && uiText(t, frames) != tt.text {
				t.Errorf("got text %q, want %q", uiText(t, frames), tt.text)
			}
			if text := uiText(t, frames); strings.Contains(text, "Xq7Rt2Lm9Vb4") || (tt.model == "secret" && !strings.Contains(text, "[REDACTED:openai_key]")) {
				t.Errorf("got text %q, want the planted key masked", text)
			}
		})
	}
}

// A chain that fails before commit answers a plain HTTP error, as the other endpoints do;
// requests the gateway refuses are 400s.
func TestUIChatErrors(t *testing.T) {
	g := serveConfig(t, uiConfig, nil)
	defer g.Close()
	tests := []struct {
		name, body, proto string
		status            int
	}{
		{"chain down", uiBody("c1", "down", "hi"), "", 502},
		{"unknown model", uiBody("c1", "nope", "hi"), "", 404},
		{"no id", `{"model":"default","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"hi"}]}]}`, "", 400},
		{"bad id", uiBody("a/b", "default", "hi"), "", 400},
		{"no messages", `{"id":"c1","model":"default"}`, "", 400},
		{"bad role", `{"id":"c1","model":"default","messages":[{"id":"u","role":"tool","parts":[]}]}`, "", 400},
		{"bad protocol", uiBody("c1", "default", "hi"), "v4", 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := uiDo(t, timeout(t, 20*time.Second), "POST", g.URL+"/v1/ui/chat", "", tt.body, "X-Sluice-Ui-Protocol", tt.proto)
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			if r.StatusCode != tt.status || !strings.Contains(string(b), `"error"`) {
				t.Errorf("got %d %s, want %d with an error body", r.StatusCode, b, tt.status)
			}
		})
	}
	if r := uiDo(t, timeout(t, 5*time.Second), "GET", g.URL+"/v1/ui/chat/nope/stream", "", ""); r.StatusCode != http.StatusNoContent {
		t.Errorf("resume of an unknown chat: got %d, want 204", r.StatusCode)
	}
	if r := uiDo(t, timeout(t, 5*time.Second), "POST", g.URL+"/v1/ui/chat/nope/stop", "", ""); r.StatusCode != http.StatusNoContent {
		t.Errorf("stop of an unknown chat: got %d, want 204", r.StatusCode)
	}
}

// CORS: allowed origins get the headers and their preflight answered before auth; others and
// the default (no origins) get none.
func TestCORS(t *testing.T) {
	g := serveConfig(t, uiConfig+"cors: {allowed_origins: [\"https://app.example\"]}\nauth: {admin_token: "+admin+"}\n", nil)
	defer g.Close()
	pre := uiDo(t, timeout(t, 5*time.Second), "OPTIONS", g.URL+"/v1/ui/chat", "", "", "Origin", "https://app.example",
		"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization, content-type, x-sluice-ui-protocol")
	pre.Body.Close()
	if pre.StatusCode != 204 || pre.Header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		!strings.Contains(pre.Header.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(pre.Header.Get("Access-Control-Allow-Headers"), "authorization") {
		t.Errorf("preflight: got %d %v, want 204 allowing the origin, POST and its headers", pre.StatusCode, pre.Header)
	}
	r := uiDo(t, timeout(t, 5*time.Second), "POST", g.URL+"/v1/ui/chat", "", uiBody("c1", "default", "hi"), "Origin", "https://app.example")
	r.Body.Close()
	if r.StatusCode != 401 || r.Header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		!strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "X-Request-Id") {
		t.Errorf("a request without a key: got %d %v, want the 401 readable by the page", r.StatusCode, r.Header)
	}
	other := uiDo(t, timeout(t, 5*time.Second), "OPTIONS", g.URL+"/v1/ui/chat", "", "", "Origin", "https://evil.example",
		"Access-Control-Request-Method", "POST")
	other.Body.Close()
	if other.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("another origin: got %v, want no CORS headers", other.Header)
	}
	d := serveConfig(t, uiConfig, nil)
	defer d.Close()
	none := uiDo(t, timeout(t, 5*time.Second), "POST", d.URL+"/v1/ui/chat", "", uiBody("c2", "default", "hi"), "Origin", "https://app.example")
	io.Copy(io.Discard, none.Body)
	none.Body.Close()
	if none.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("no allowed origins: got %v, want no CORS headers", none.Header)
	}
}
