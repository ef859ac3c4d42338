package anthropic_test

// Tests across the two sides of the Messages wire: a client's body decoded by the Messages
// dialect and translated by this adapter (not sent natively: as for a request the chain
// translates) reaches an httptest Anthropic upstream with its breakpoints and signatures.
// Only tests join the two; the adapter itself knows no client wire (internal/archtest).

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	dialect "github.com/sluice-gw/sluice/internal/dialect/anthropic"
	"github.com/sluice-gw/sluice/internal/provider/anthropic"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

const answer = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":{\"input_tokens\":1}}}\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

// translated decodes a client's Messages body, drops its native copy, and returns the body
// an Anthropic upstream got for it.
func translated(t *testing.T, body []byte) (raw []byte, sent map[string]any, client map[string]any) {
	t.Helper()
	r, err := dialect.Decode(body, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	req := r.Req
	req.Model, req.Native = r.Model, nil
	u := providertest.NewUpstream(t, providertest.SSE(answer))
	s, err := anthropic.New(anthropic.Config{BaseURL: u.URL, APIKey: "k", HTTPClient: u.Client()}).Stream(context.Background(), &req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, end := providertest.Drain(t, s); end != io.EOF {
		t.Fatalf("end: got %v, want io.EOF", end)
	}
	raw, _, _ = u.Last()
	if err := json.Unmarshal(raw, &sent); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(body, &client)
	return raw, sent, client
}

// A Claude Code-shaped conversation (thinking with tools, markers on a tool with ttl 1h, the
// system prompt, a tool_use and the last tool_result) goes to Anthropic translated with the
// same markers on the same blocks and the thinking blocks' signature and data byte for byte.
func TestMessagesRoundTrip(t *testing.T) {
	sig, data := "EqQBCkYIARgCIkB/x+y==", "EmwKAhgBEgy3va3pzix/LafPsn4a+/=="
	body := `{"model":"claude-sonnet-4-5","max_tokens":4096,"thinking":{"type":"enabled","budget_tokens":2048},` +
		`"system":[{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral","ttl":"1h"}}],` +
		`"tools":[{"name":"Bash","description":"run","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral","ttl":"1h"}}],` +
		`"messages":[{"role":"user","content":"List the files."},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"I will run ls.","signature":"` + sig + `"},{"type":"redacted_thinking","data":"` + data + `"},` +
		`{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"},"cache_control":{"type":"ephemeral"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a.txt","cache_control":{"type":"ephemeral"}}]}],` +
		`"metadata":{"user_id":"session-1"},"stream":true}`
	raw, sent, client := translated(t, []byte(body))
	got, want := providertest.CacheSites(sent), providertest.CacheSites(client)
	if len(want) != 4 || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got cache_control at %v, want the client's %v", got, want)
	}
	for _, s := range []string{`{"type":"thinking","thinking":"I will run ls.","signature":"` + sig + `"}`, `{"type":"redacted_thinking","data":"` + data + `"}`,
		`"metadata":{"user_id":"session-1"}`} {
		if !strings.Contains(string(raw), s) {
			t.Errorf("got %s, want %s in it", raw, s)
		}
	}
}

// The recorded Claude Code request's three markers (two on the system prompt, one on the
// environment's system message inside messages) reach Anthropic translated: all on the
// system prompt, where the translation puts every system message.
func TestClaudeCodeTranslated(t *testing.T) {
	body, err := os.ReadFile("../../dialect/anthropic/testdata/claude-code-2.1.328.json")
	if err != nil {
		t.Fatal(err)
	}
	_, sent, _ := translated(t, body)
	want := []string{"system.1=-", "system.2=-", "system.3=-"}
	if got := providertest.CacheSites(sent); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got cache_control at %v, want %v", got, want)
	}
	sys, _ := sent["system"].([]any)
	if env, _ := sys[len(sys)-1].(map[string]any); !strings.Contains(env["text"].(string), "# Environment") {
		t.Errorf("got last system block %v, want the environment", env)
	}
}
