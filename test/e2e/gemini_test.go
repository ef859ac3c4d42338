package e2e

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestGeminiNodeSDK runs the official Google Gen AI SDK (gemini.test.mjs) against the
// gateway's Gemini API on the mock: generateContent streamed and not, function calling in two
// turns, countTokens, and errors before and after the first byte.
func TestGeminiNodeSDK(t *testing.T) {
	bin := node(t)
	gw := messagesGateway(t, `
  g-echo: [mock/echo]
  g-anth: [anth/echo]
  g-tools: ["mock/tools?calls=1"]
  g-cut: ["mock/text?len=80&fail=error&after=6"]
  g-slow: ["mock/text?len=20&first=120ms&delay=40ms"]
heartbeat_interval: 20ms
`)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--test", "--test-reporter=spec", "gemini.test.mjs")
	cmd.Env = append(os.Environ(), "SLUICE_URL="+gw, "NODE_NO_WARNINGS=1")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("the SDK tests failed: %v", err)
	}
}
