package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClaudeCode runs the Claude Code CLI (@anthropic-ai/claude-code, pinned in package.json)
// through the gateway, once on an Anthropic and once on a Chat upstream of the mock: the
// script asks for the Bash tool to run a harmless command, then answers with what it
// printed, which the CLI's output must show. HOME is a fresh folder and nonessential
// traffic is off: nothing leaves loopback.
func TestClaudeCode(t *testing.T) {
	node(t)
	bin, err := filepath.Abs(filepath.Join("node_modules", ".bin", "claude"))
	if err != nil {
		t.Fatal(err)
	}
	const marker = "sluice-marker-42"
	// The shell computes the marker's number: an answer quoting it quotes what Bash printed.
	script := `tools?name=Bash&args={"command":"echo+sluice-marker-$((6*7))","description":"Print+a+marker"}&then=echo`
	for _, prov := range []string{"anth", "mock"} {
		t.Run(prov, func(t *testing.T) {
			gw := messagesGateway(t, `
  claude-*: ['`+prov+`/`+script+`']
  claude-haiku-*: ["`+prov+`/text?len=0&say=Title"]
`)
			home := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "-p", "Print the marker with Bash.", "--allowedTools", "Bash")
			cmd.Dir = home
			cmd.Env = append(os.Environ(), "HOME="+home, "ANTHROPIC_BASE_URL="+gw, "ANTHROPIC_AUTH_TOKEN=sk-sluice-e2e",
				"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
				// Anything but the gateway would go to a proxy that is not there.
				"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1")
			out, err := cmd.CombinedOutput()
			t.Logf("claude -p:\n%s", out)
			if err != nil {
				t.Fatalf("claude: %v", err)
			}
			if !strings.Contains(string(out), "The tool answered: "+marker) {
				t.Errorf("got %q, want the answer quoting the tool's output %q", out, marker)
			}
		})
	}
}
