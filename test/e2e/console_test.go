package e2e

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/gateway"
	"github.com/sluice-gw/sluice/internal/mockllm"
)

// cachedTarget is a target whose upstream (Anthropic's wire, recorded bytes) reports 1,200
// prompt tokens read from its cache and 300 written to it on every call, priced with cache
// rates: the console's Usage page shows real cache reads and savings (issue 46).
const cachedTarget = "anthcache/replay?file=anthropic-cache-read-write.sse"

// TestConsole drives the operator console (/console/) in Chromium against a gateway on
// loopback serving the embedded default configuration with an admin token: sign-in, the
// Logs page, keys created, used, edited and revoked, captured hostile content shown as text,
// Usage (the prompt cache's hit ratio, reads and savings included), Health, sign-out
// (console.test.mjs); a team_admin's keys, usage, teams and logs (console-roles.test.mjs).
// Without Chromium the test is skipped, and fails in CI. With -update it writes the screenshots of real data to docs/img/.
func TestConsole(t *testing.T) {
	bin := node(t)
	needChromium(t)
	const admin = "console-admin-e2e"
	cfg := config.Default()
	cfg.Auth.AdminToken = admin
	// The request log in a file of the test's, capturing content: the browser reads real
	// records, a hostile prompt's included.
	cfg.Logs.URL, cfg.Logs.Capture = "sqlite://"+filepath.Join(t.TempDir(), "logs.db"), "content"
	up := httptest.NewServer(mockllm.New(mockllm.Options{FixturesDir: filepath.Join("..", "..", "internal", "server", "testdata")}))
	defer up.Close()
	cfg.Providers["anthcache"] = config.Provider{Kind: "anthropic", BaseURL: up.URL, APIKey: "sk-ant-e2e"}
	read, write := 0.3, 3.75
	if cfg.Prices == nil {
		cfg.Prices = map[string]config.Price{}
	}
	cfg.Prices[cachedTarget] = config.Price{Input: 3, Output: 15, CachedInput: &read, CacheWrite: &write}
	srv, err := gateway.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(srv)
	defer srv.Close()
	defer gw.Close()

	shots := os.Getenv("SLUICE_SHOTS") // to look at every screenshot, canned ones included
	if shots == "" {
		shots = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// console-roles.test.mjs signs in as a team_admin (issue 37): one gateway, both files.
	cmd := exec.CommandContext(ctx, bin, "--test", "--test-reporter=spec", "--test-concurrency=1", "console.test.mjs", "console-roles.test.mjs")
	cmd.Env = append(os.Environ(), "SLUICE_URL="+gw.URL, "SLUICE_ADMIN="+admin, "SLUICE_CACHED="+cachedTarget, "SLUICE_SHOTS="+shots,
		"CHROMIUM="+chromiumPath, "NODE_NO_WARNINGS=1")
	cmd.WaitDelay = 10 * time.Second // Chromium left running must not hold the test
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("the console's browser tests failed: %v", err)
	}
	if *update {
		// Screenshots of real records only: the ones of canned records (fixture-*.png) are
		// for looking at, not for the README.
		names, _ := filepath.Glob(filepath.Join(shots, "console-*.png"))
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join("..", "..", "docs", "img", filepath.Base(n)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
