package server_test

import (
	"io"
	"strings"
	"testing"
)

// TestThinkingAcrossWires: a thinking budget crosses between the wires that take one, as it
// is: an Anthropic client's thinking.budget_tokens is a Gemini target's thinkingBudget, and a
// Gemini client's thinkingBudget an Anthropic target's budget_tokens (at least the API's
// 1024); 0 turns thinking off.
func TestThinkingAcrossWires(t *testing.T) {
	for _, c := range []struct {
		name, target, path, body, want, not string
	}{
		{"anthropic to gemini", "goog/echo", "/v1/messages",
			`{"model":"pair","max_tokens":8000,"thinking":{"type":"enabled","budget_tokens":5000},"messages":[{"role":"user","content":"hi"}]}`,
			`"thinkingConfig":{"thinkingBudget":5000,"includeThoughts":true}`, ""},
		{"gemini to anthropic", "anth/echo", "/v1beta/models/pair:generateContent",
			`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":3000}}}`,
			`"thinking":{"type":"enabled","budget_tokens":3000}`, ""},
		{"gemini small budget to anthropic", "anth/echo", "/v1beta/models/pair:generateContent",
			`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":200}}}`,
			`"thinking":{"type":"enabled","budget_tokens":1024}`, ""},
		{"gemini off to anthropic", "anth/echo", "/v1beta/models/pair:generateContent",
			`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":0}}}`,
			`"messages":[`, `"thinking"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newFallbackGatewayWith(t, c.target, "mock/echo", "{first_event: 5s}")
			resp := postTo(t, g.url, c.path, c.body)
			out, _ := io.ReadAll(resp.Body)
			up := string(g.mock.LastRequest("echo"))
			if resp.StatusCode != 200 || !strings.Contains(up, c.want) || c.not != "" && strings.Contains(up, c.not) {
				t.Errorf("got %d %s; the upstream got %s, want %s", resp.StatusCode, out, up, c.want)
			}
		})
	}
}
