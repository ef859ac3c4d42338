package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/config"
	gw "github.com/sluice-gw/sluice/internal/gateway"
)

// claudeCodeSystemBody is the shape of Claude Code 2.1.328's request with the MCP gateway in
// use: system messages inside messages (issue 35), a string one and one of blocks.
func claudeCodeSystemBody(model string) string {
	return `{"model":` + quote(model) + `,"max_tokens":1024,"system":[{"type":"text","text":"You are Claude Code."}],` +
		`"messages":[{"role":"user","content":[{"type":"text","text":"List the files."}]},` +
		`{"role":"system","content":"MCP server everything is connected."},` +
		`{"role":"user","content":"Say hi."},` +
		`{"role":"system","content":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}]}],"stream":true}`
}

// claudeCodeRequest is the recorded request of Claude Code 2.1.328 (internal/dialect/anthropic
// testdata) for model.
func claudeCodeRequest(t *testing.T, model string) string {
	t.Helper()
	b, err := os.ReadFile("../dialect/anthropic/testdata/claude-code-2.1.328.json")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(string(bytes.TrimSpace(b)), `"model":"claude-opus-5-5"`, `"model":`+quote(model), 1)
}

// A system message inside messages reaches an Anthropic target byte for byte, a Chat target
// as a system message in its place, and a Responses target as an input item in its place.
func TestMessagesSystemInMessages(t *testing.T) {
	g := messagesGateway(t)
	body := claudeCodeSystemBody("a-echo")
	resp, out := postMessages(t, g, body)
	if resp.StatusCode != 200 || !strings.Contains(out, "event: message_stop") {
		t.Fatalf("anthropic target: got %d %s", resp.StatusCode, out)
	}
	// Member by member, as TestMessagesNative: the mock keeps the body as a map.
	var got, want map[string]json.RawMessage
	json.Unmarshal(g.mock.LastRequest("echo"), &got)
	json.Unmarshal([]byte(strings.Replace(body, `"a-echo"`, `"echo"`, 1)), &want)
	for k, v := range want {
		if string(got[k]) != string(v) {
			t.Errorf("%s: anthropic upstream got %s, want %s", k, got[k], v)
		}
	}

	resp, out = postMessages(t, g, claudeCodeSystemBody("c-echo"))
	if resp.StatusCode != 200 || !strings.Contains(out, "event: message_stop") {
		t.Fatalf("chat target: got %d %s", resp.StatusCode, out)
	}
	var up struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(g.mock.LastRequest("echo"), &up); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range up.Messages {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); got != "system,user,system,user,system" ||
		!strings.Contains(string(up.Messages[2].Content), "MCP server everything is connected.") ||
		!strings.Contains(string(up.Messages[4].Content), "Be brief.") {
		t.Errorf("chat upstream got roles %s, %s; want each system message in its place", got, g.mock.LastRequest("echo"))
	}

	for _, model := range []string{"a-echo", "c-echo"} {
		if resp, out := postMessages(t, g, claudeCodeRequest(t, model)); resp.StatusCode != 200 || !strings.Contains(out, "event: message_stop") {
			t.Errorf("Claude Code 2.1.328's request to %s: got %d %.300s", model, resp.StatusCode, out)
		}
	}

	u, mock := upstreamsGateway(t, "")
	r := postTo(t, u, "/v1/messages", claudeCodeSystemBody("resp/echo"))
	b, _ := io.ReadAll(r.Body)
	upr := string(mock.LastRequest("echo"))
	if r.StatusCode != 200 || !strings.Contains(upr, `"instructions":"You are Claude Code."`) ||
		!strings.Contains(upr, "MCP server everything is connected.") || !strings.Contains(upr, "Be brief.") {
		t.Errorf("responses target: got %d %s, upstream %s", r.StatusCode, b, upr)
	}
}

// defaultGateway is the embedded default configuration with no provider key in the
// environment, as a first `make run` serves it.
func defaultGateway(t *testing.T) string {
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"} {
		t.Setenv(k, "")
	}
	cfg := config.Default()
	cfg.Logs.URL = "" // not the default's ./data
	s, err := gw.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(func() {
		srv.Close()
		s.Close()
	})
	return srv.URL
}

// With no key, the embedded default serves the coding agents' own default model ids, each
// on a simulation of its wire: Claude Code's (system messages inside messages included),
// Codex's (its default web_search kept for the Responses simulation), Gemini CLI's.
func TestEmbeddedDefaultServesAgents(t *testing.T) {
	u := defaultGateway(t)
	for _, tc := range []struct{ path, body, target string }{
		{"/v1/messages", messagesBody("claude-opus-5-5", true, ""), "sim-anthropic/echo"},
		{"/v1/messages", messagesBody("claude-sonnet-4-5-20250929", false, ""), "sim-anthropic/echo"},
		{"/v1/messages", messagesBody("claude-haiku-4-5-20251001", true, ""), "sim-anthropic/echo"},
		{"/v1/messages", claudeCodeSystemBody("claude-opus-5-5"), "sim-anthropic/echo"},
		{"/v1/messages", claudeCodeRequest(t, "claude-opus-5-5"), "sim-anthropic/echo"},
		{"/v1/responses", codexRequest(t, "gpt-5.1-codex"), "sim-responses/echo"},
		{"/v1/responses", codexRequest(t, "gpt-5.1-codex-max"), "sim-responses/echo"},
		{"/v1/responses", respBody("o4-mini", false, ""), "sim-responses/echo"},
		{"/v1/responses", respBody("codex-mini-latest", true, ""), "sim-responses/echo"},
		{"/v1/chat/completions", `{"model":"gemini-2.5-pro","messages":[{"role":"user","content":"hi"}]}`, "sim/echo"},
		{"/v1/chat/completions", `{"model":"gemini-2.5-flash","messages":[{"role":"user","content":"hi"}]}`, "sim/echo"},
		{"/v1/chat/completions", `{"model":"default","messages":[{"role":"user","content":"hi"}]}`, "sim/echo"},
	} {
		r := postTo(t, u, tc.path, tc.body)
		b, _ := io.ReadAll(r.Body)
		if r.StatusCode != 200 || r.Header.Get("X-Sluice-Target") != tc.target || r.Header.Get("X-Sluice-Warning") != "" {
			t.Errorf("%s %.60s: got %d from %q (warning %q) %.300s; want 200 from %s", tc.path, tc.body, r.StatusCode,
				r.Header.Get("X-Sluice-Target"), r.Header.Get("X-Sluice-Warning"), b, tc.target)
		}
	}
	// Codex asking for a Claude model: no Responses target, so its web_search is dropped.
	r := postTo(t, u, "/v1/responses", codexRequest(t, "claude-sonnet-4-5"))
	io.Copy(io.Discard, r.Body)
	if w := r.Header.Get("X-Sluice-Warning"); r.StatusCode != 200 || w != "dropped hosted tool web_search (no target of alias claude-* serves it)" {
		t.Errorf("got %d, warning %q; want 200 and web_search dropped", r.StatusCode, w)
	}
}

// A dropped hosted tool is one warning line per request, naming every tool dropped, as the
// header does.
func TestHostedToolDropLogged(t *testing.T) {
	var log logBuffer
	hs := listen(buildConfig(t, `
providers:
  sim: {kind: sim}
models:
  chat-only: [sim/echo]
`, nil, &log))
	t.Cleanup(hs.Close)
	r := postTo(t, hs.URL, "/v1/responses", `{"model":"chat-only","input":"hi","tools":[{"type":"web_search"},{"type":"file_search"}],"stream":false}`)
	b, _ := io.ReadAll(r.Body)
	want := "dropped hosted tool web_search, file_search (no target of alias chat-only serves it)"
	if r.StatusCode != 200 || r.Header.Get("X-Sluice-Warning") != want {
		t.Errorf("got %d, X-Sluice-Warning %q, %s; want 200, %q", r.StatusCode, r.Header.Get("X-Sluice-Warning"), b, want)
	}
	if got := log.String(); strings.Count(got, "hosted tool dropped") != 1 || !strings.Contains(got, "WARN") ||
		!strings.Contains(got, "chat-only") || !strings.Contains(got, "file_search") {
		t.Errorf("got log\n%s\nwant one warning naming the alias and the tools", got)
	}
}
