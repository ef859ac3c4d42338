package e2e

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/mockllm"
)

// geminiSettings is the Gemini CLI's ~/.gemini/settings.json for the gateway: the API key
// auth (the key in GEMINI_API_KEY, the base URL in GOOGLE_GEMINI_BASE_URL), and nothing
// sent anywhere else: no usage statistics, no telemetry, no update check.
const geminiSettings = `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false}
}
`

// The real Gemini CLI (@google/gemini-cli, pinned in package.json) runs one whole tool round
// through the gateway's Gemini wire: the mock asks for its shell tool (run_shell_command), the
// CLI runs it and sends its output back as a functionResponse, and the mock answers quoting
// it, which the CLI prints. Once to a Gemini upstream (the mock speaking the Gemini API), once
// to a Chat Completions upstream (translated both ways). HOME is a fresh folder and every
// proxy a closed loopback port: nothing leaves the machine.
func TestGeminiCLI(t *testing.T) {
	node(t)
	mock := mockllm.New(mockllm.Options{})
	ms := httptest.NewServer(mock)
	defer ms.Close()
	// printf puts the marker together: an answer quoting it quotes what the tool printed, not
	// the call (the CLI refuses $(( )) as command substitution).
	const marker = "sluice-marker-42"
	const script = `tools?name=run_shell_command&args={"command":"printf %25s-%25s sluice-marker 42","description":"Print a marker"}&then=echo`
	gw := serveYAML(t, `
providers:
  goog: {kind: gemini, base_url: "${MOCK_URL}/v1beta", api_key: AIza-e2e-upstream}
  chat: {kind: openai-compatible, base_url: "${MOCK_URL}/v1"}
models:
  cli-gemini: ['goog/`+script+`']
  cli-chat: ['chat/`+script+`']
`, map[string]string{"MOCK_URL": ms.URL}, slog.New(slog.NewTextHandler(io.Discard, nil)))

	for _, alias := range []string{"cli-gemini", "cli-chat"} {
		t.Run(alias, func(t *testing.T) {
			out := runGeminiCLI(t, gw, "-m", alias, "--approval-mode", "yolo", "-p", "Print the marker with the shell.")
			up := string(mock.LastRequest(script))
			if !strings.Contains(out, "The tool answered: ") || !strings.Contains(out, marker) {
				t.Errorf("want the answer quoting the command's output %q; upstream's last request:\n%s", marker, up)
			}
			// The call went back signed to the Gemini upstream, and as a tool message to Chat.
			want := []string{`"thoughtSignature":"`, `"functionResponse":{`, `"name":"run_shell_command"`}
			if alias == "cli-chat" {
				want = []string{`"role":"tool"`, `"name":"run_shell_command"`}
			}
			for _, w := range want {
				if !strings.Contains(up, w) {
					t.Errorf("upstream request lacks %s:\n%s", w, up)
				}
			}
		})
	}
}

// runGeminiCLI runs the pinned Gemini CLI with args against the gateway at gw, as a new user
// points it (GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY, geminiSettings), in a fresh HOME and
// folder, every proxy a closed loopback port; it returns what the CLI printed.
func runGeminiCLI(t *testing.T, gw string, args ...string) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join("node_modules", ".bin", "gemini"))
	if err != nil {
		t.Fatal(err)
	}
	home, work := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(geminiSettings), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--skip-trust"}, args...)...)
	cmd.Dir = work
	cmd.WaitDelay = 5 * time.Second // the CLI's children may hold the output open
	cmd.Env = append(os.Environ(), "HOME="+home, "GOOGLE_GEMINI_BASE_URL="+gw, "GEMINI_API_KEY=sk-sluice-e2e",
		"NO_COLOR=1", "GEMINI_CLI_NO_RELAUNCH=true",
		// Anything but the gateway would go to a proxy that is not there.
		"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "ALL_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost")
	out, err := cmd.CombinedOutput()
	t.Logf("gemini %v:\n%.3000s", args, out)
	if err != nil {
		t.Fatalf("gemini: %v", err)
	}
	return string(out)
}
