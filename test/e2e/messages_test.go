package e2e

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/mockllm"
)

// TestAnthropicNodeSDK runs the official Anthropic SDK (messages.test.mjs) against the
// gateway's Messages API on the mock.
func TestAnthropicNodeSDK(t *testing.T) {
	bin := node(t)
	gw := messagesGateway(t, `
  claude: [anth/echo]
  claude-on-chat: [mock/echo]
  claude-tools: ["anth/tools?calls=2"]
  chat-tools: ["mock/tools?calls=2"]
  claude-think: ["anth/reason?think=40&len=20"]
  claude-cut: ["anth/text?len=80&fail=error&after=6"]
  overloaded-once: ["anth/echo?fail=529&times=1"]
  overloaded-always: ["anth/text?fail=529"]
`)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--test", "--test-reporter=spec", "messages.test.mjs")
	cmd.Env = append(os.Environ(), "SLUICE_URL="+gw, "NODE_NO_WARNINGS=1")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("the SDK tests failed: %v", err)
	}
}

// messagesGateway serves models (yaml lines under models:) from the mock, as provider anth
// speaking Anthropic and mock speaking Chat, and returns the gateway's URL.
func messagesGateway(t *testing.T, models string) string {
	t.Helper()
	mock := httptest.NewServer(mockllm.New(mockllm.Options{}))
	t.Cleanup(mock.Close)
	return serveYAML(t, `
providers:
  mock: {kind: openai-compatible, base_url: "${MOCK_URL}/v1"}
  anth: {kind: anthropic, base_url: "${MOCK_URL}", api_key: sk-ant-e2e}
models:`+models, map[string]string{"MOCK_URL": mock.URL}, slog.New(slog.NewTextHandler(io.Discard, nil)))
}
