package e2e

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/uistream"
)

// node finds node and npm, and installs the pinned packages when node_modules is missing or
// older than the lock file. Without node, the test fails in CI and is skipped elsewhere.
func node(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is not installed; .ci/run installs it")
		}
		t.Skip("node is not installed")
	}
	lock, _ := os.Stat("package-lock.json")
	mods, err := os.Stat(filepath.Join("node_modules", ".package-lock.json"))
	if err != nil || lock == nil || mods.ModTime().Before(lock.ModTime()) {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("npm ci: %v", err)
		}
	}
	return bin
}

func TestOpenAINodeSDK(t *testing.T) {
	bin := node(t)
	mock := httptest.NewServer(mockllm.New(mockllm.Options{}))
	defer mock.Close()
	tool := progressTool() // tools.test.mjs (tools_test.go)
	defer tool.Close()
	gw := serveYAML(t, `
providers:
  mock: {kind: openai-compatible, base_url: "${MOCK_URL}/v1"}
  anth: {kind: anthropic, base_url: "${MOCK_URL}", api_key: sk-ant-e2e}
  resp: {kind: openai-compatible, api: responses, base_url: "${MOCK_URL}/v1"}
models:
  default: [mock/echo]
  claude: [anth/echo]
  claude-tools: ["anth/tools?calls=2"]
  overloaded-then-openai: ["anth/text?fail=error", "mock/text?len=80&chunk=9"]
  resp-error-then-chat: ["resp/text?fail=error", "mock/echo"]
  ui-secret: ["mock/text?len=40&say=key+sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7+end"]
  ui-tools: ["mock/tools?calls=1&say=Checking."]
  ui-restart:
    targets: ["mock/text?len=80&fail=cut&after=3", "mock/text?len=0&say=Second+answer."]
    on_midstream_failure: restart
  ui-restart-v5:
    targets: ["mock/text?len=80&fail=cut&after=3&seed=5", "mock/text?len=0&say=Second+answer."]
    on_midstream_failure: restart
  ui-restart-v6:
    targets: ["mock/text?len=80&fail=cut&after=3&seed=6", "mock/text?len=0&say=Second+answer."]
    on_midstream_failure: restart
  ui-slow: ["mock/text?len=400&chunk=8&delay=10ms"]
  ui-server-tool: {targets: ['mock/tools?name=count_rows&args={"table":"orders"}&then=echo'], tools: [count_rows]}
  ui-mixed-tools: {targets: ['mock/tools?calls=2&name=count_rows,get_weather&args={"table":"orders"}&then=echo'], tools: [count_rows]}
tools:
  count_rows: {http: {url: "${TOOL_URL}/count", timeout: 30s, liveness: 5s}}
`, map[string]string{"MOCK_URL": mock.URL, "TOOL_URL": tool.URL}, slog.New(slog.NewTextHandler(io.Discard, nil)))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	allow, _ := json.Marshal(uistream.AllowList()) // ui.test.mjs checks every chunk against it
	allowFile := filepath.Join(t.TempDir(), "ui-allow.json")
	if err := os.WriteFile(allowFile, allow, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, "--test", "--test-reporter=spec", "openai.test.mjs", "redaction.test.mjs", "anthropic.test.mjs", "responses.test.mjs", "ui.test.mjs", "tools.test.mjs")
	cmd.Env = append(os.Environ(), "SLUICE_URL="+gw, "SLUICE_UI_ALLOW="+allowFile, "NODE_NO_WARNINGS=1")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("the SDK tests failed: %v", err)
	}
}
