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

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/gateway"
)

// The pinned Claude Code, Gemini and Codex CLIs, as a new user runs them (issue 35): on the embedded
// default with no provider key, no --model and no model in config.toml, each asks for its own
// default model id (Claude Code claude-opus-5-5, Gemini CLI 0.61.0 gemini-2.5-pro, Codex
// 0.169.0 gpt-6.1-sol with web_search)
// and gets an answer from the simulation of its wire (sim/echo repeats the prompt).
func TestAgentsOnEmbeddedDefault(t *testing.T) {
	node(t)
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"} {
		t.Setenv(k, "")
	}
	cfg := config.Default()
	cfg.Logs.URL = "" // not the default's ./data
	srv, err := gateway.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	gs := httptest.NewServer(srv)
	defer srv.Close()
	defer gs.Close()
	const prompt = "Say the word sluice-default-ok."
	proxies := []string{"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "ALL_PROXY=http://127.0.0.1:9",
		"NO_PROXY=127.0.0.1,localhost"}

	t.Run("claude", func(t *testing.T) {
		bin, _ := filepath.Abs(filepath.Join("node_modules", ".bin", "claude"))
		home := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "-p", prompt)
		cmd.Dir = home
		cmd.Env = append(os.Environ(), append(proxies, "HOME="+home, "ANTHROPIC_BASE_URL="+gs.URL, "ANTHROPIC_AUTH_TOKEN=unused",
			"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1")...)
		out, err := cmd.CombinedOutput()
		t.Logf("claude -p:\n%.2000s", out)
		if err != nil || !strings.Contains(string(out), "sluice-default-ok") {
			t.Fatalf("claude: %v; want the echoed prompt", err)
		}
	})

	t.Run("gemini", func(t *testing.T) {
		// Its default model id, named: without -m, 0.61.0's auto router first asks for a JSON
		// classification, which sim/echo does not give, and retries for about 90 s (README).
		if out := runGeminiCLI(t, gs.URL, "-m", "gemini-2.5-pro", "-p", prompt); !strings.Contains(out, "sluice-default-ok") {
			t.Fatalf("gemini: got %q, want the echoed prompt", out)
		}
	})

	t.Run("codex", func(t *testing.T) {
		bin, _ := filepath.Abs(filepath.Join("node_modules", ".bin", "codex"))
		home, work := t.TempDir(), t.TempDir()
		conf := codexConfig(gs.URL, "", "") // no model: Codex's own default
		if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "exec", "--skip-git-repo-check", prompt)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), append(proxies, "HOME="+home, "CODEX_HOME="+home, "SLUICE_KEY=unused",
			"NO_COLOR=1", "RUST_LOG=error")...)
		out, err := cmd.CombinedOutput()
		t.Logf("codex exec:\n%.2000s", out)
		if err != nil || !strings.Contains(string(out), "sluice-default-ok") {
			t.Fatalf("codex: %v; want the echoed prompt", err)
		}
	})
}
