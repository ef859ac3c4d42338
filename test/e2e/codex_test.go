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

// The real Codex CLI (@openai/codex, pinned in package.json) runs one whole tool round
// through the gateway: the mock asks for its shell tool (exec_command) to run a harmless
// command, Codex runs it and sends the output back, and the mock answers with what the tool
// printed, which Codex prints. Once to a Responses upstream (Codex's tools, client_metadata,
// include... passed through), once to a Chat Completions upstream (translated, web_search
// turned off in config.toml since a Chat target cannot run it).
func TestCodexCLI(t *testing.T) {
	node(t)
	codex, err := filepath.Abs(filepath.Join("node_modules", ".bin", "codex"))
	if err != nil {
		t.Fatal(err)
	}
	mock := mockllm.New(mockllm.Options{})
	ms := httptest.NewServer(mock)
	defer ms.Close()
	const script = `tools?name=exec_command&args={"cmd":"echo sluice-codex-ok","yield_time_ms":1000}&then=echo`
	gw := serveYAML(t, `
providers:
  chat: {kind: openai-compatible, base_url: "${MOCK_URL}/v1"}
  resp: {kind: openai-compatible, api: responses, base_url: "${MOCK_URL}/v1"}
models:
  codex-resp: ['resp/`+script+`']
  codex-chat: ['chat/`+script+`']
`, map[string]string{"MOCK_URL": ms.URL}, slog.New(slog.NewTextHandler(io.Discard, nil)))

	for _, tc := range []struct{ alias, extra string }{
		{"codex-resp", ""},
		{"codex-chat", "web_search = \"disabled\"\n"},
	} {
		t.Run(tc.alias, func(t *testing.T) {
			home := t.TempDir()
			work := t.TempDir()
			conf := codexConfig(gw, `model = "`+tc.alias+`"`+"\n", tc.extra)
			if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(conf), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, codex, "exec", "--skip-git-repo-check", "--sandbox", "danger-full-access",
				"Run `echo sluice-codex-ok` and tell me what it printed.")
			cmd.Dir = work
			// Codex 0.169.0 reaches out at start (api.github.com, chatgpt.com: seen as DNS
			// lookups under strace) though it needs neither: its proxies are a closed loopback
			// port, so nothing leaves the machine; the gateway is NO_PROXY.
			cmd.Env = append(os.Environ(), "HOME="+home, "CODEX_HOME="+home, "SLUICE_KEY=sk-sluice-e2e",
				"NO_COLOR=1", "RUST_LOG=error", "OPENAI_API_KEY=",
				"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "ALL_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost")
			out, err := cmd.CombinedOutput()
			t.Logf("codex exec:\n%s", out)
			if err != nil {
				t.Fatalf("codex exec: %v", err)
			}
			// The mock's answer quotes the tool's output: it went through the whole round.
			up := string(mock.LastRequest(script))
			if !strings.Contains(string(out), "The tool answered: ") || !strings.Contains(string(out), "sluice-codex-ok") {
				t.Errorf("want the answer quoting the command's output; upstream's last request:\n%s", up)
			}
			// Codex's namespace tool (the 400 of issue 21): whole to Responses, flattened to Chat.
			want := []string{`"type":"namespace","name":"multi_agent_v1"`, `"type":"web_search"`, `"client_metadata":`}
			if tc.alias == "codex-chat" {
				want = []string{`"name":"multi_agent_v1__spawn_agent"`, `"role":"tool"`}
			}
			for _, w := range want {
				if !strings.Contains(up, w) {
					t.Errorf("upstream request lacks %s:\n%s", w, up)
				}
			}
		})
	}
}

// codexConfig is Codex's config.toml pointing it at the gateway at base over the Responses
// wire, with the key in SLUICE_KEY, no approval prompts, no update check and no analytics;
// head and extra are more top-level settings (head before the provider's, extra after).
func codexConfig(base, head, extra string) string {
	return head + `model_provider = "sluice"
approval_policy = "never"
check_for_update_on_startup = false
` + extra + `
[model_providers.sluice]
name = "Sluice"
base_url = "` + base + `/v1"
wire_api = "responses"
env_key = "SLUICE_KEY"

[analytics]
enabled = false
`
}
