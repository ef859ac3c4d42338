package e2e

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/mockllm"
)

// TestClaudeCodeMCP runs Claude Code with the gateway as both its model endpoint and its MCP
// server (claude mcp add --transport http ... --header "Authorization: Bearer <key>", as the
// README says): in a round served by /v1/messages, the mock asks for the echo tool of
// server-everything as Claude Code names it (mcp__sluice__everything__echo); Claude Code calls
// it through the gateway's /mcp, and the final answer quotes what the tool returned.
func TestClaudeCodeMCP(t *testing.T) {
	bin, script := everything(t)
	claude, err := filepath.Abs(filepath.Join("node_modules", ".bin", "claude"))
	if err != nil {
		t.Fatal(err)
	}
	const key, marker = "sk-e2e-claude-mcp-0123456789abcdefghij", "sluice-mcp-42"
	mock := httptest.NewServer(mockllm.New(mockllm.Options{}))
	t.Cleanup(mock.Close)
	gw := serveYAML(t, `
providers:
  anth: {kind: anthropic, base_url: "${MOCK_URL}", api_key: sk-ant-e2e}
models:
  claude-*: ['anth/tools?name=mcp__sluice__everything__echo&args={"message":"`+marker+`"}&then=echo']
  claude-haiku-*: ["anth/text?len=0&say=Title"]
keys:
  - {name: cc, hash: `+auth.Hash(key)+`, mcp: {servers: [everything]}}
tools:
  everything: {mcp: {command: "${NODE}", args: ["${SCRIPT}", stdio], cwd: "${CWD}", timeout: 30s, tools: {allow: [echo]}}}
`, map[string]string{"MOCK_URL": mock.URL, "NODE": bin, "SCRIPT": script, "CWD": t.TempDir()}, slog.New(slog.DiscardHandler))

	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "ANTHROPIC_BASE_URL="+gw, "ANTHROPIC_AUTH_TOKEN="+key,
		"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1")
	run := func(timeout time.Duration, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, claude, args...)
		cmd.Dir, cmd.Env, cmd.WaitDelay = home, env, 5*time.Second
		out, err := cmd.CombinedOutput()
		t.Logf("claude %s:\n%s", strings.Join(args, " "), out)
		if err != nil {
			t.Fatalf("claude: %v", err)
		}
		return string(out)
	}
	run(30*time.Second, "mcp", "add", "--transport", "http", "sluice", gw+"/mcp", "--header", "Authorization: Bearer "+key)
	out := run(90*time.Second, "-p", "Echo the marker with the sluice tool.", "--allowedTools", "mcp__sluice__everything__echo")
	if !strings.Contains(out, "The tool answered: Echo: "+marker) {
		t.Errorf("got %q, want the answer quoting the MCP tool's result %q", out, "Echo: "+marker)
	}
}
