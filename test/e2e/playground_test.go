package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
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
)

var update = flag.Bool("update", false, "rewrite docs/playground.png with the browser test's screenshot")

// chromiumPath is Debian's Chromium, which .ci/run installs.
const chromiumPath = "/usr/bin/chromium"

// needChromium skips the test without Chromium, and fails it in CI.
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed; .ci/run installs it")
		}
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
}

// TestPlaygroundStream runs the page's protocol code under node, without a browser.
func TestPlaygroundStream(t *testing.T) {
	bin := node(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--test", "--test-reporter=spec", "playground-stream.test.mjs")
	cmd.Env = append(os.Environ(), "NODE_NO_WARNINGS=1")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("the playground's stream tests failed: %v", err)
	}
}

// TestPlayground loads the playground page in Chromium from a gateway on loopback that serves
// the embedded default configuration (the simulated provider: what `make run` shows), with
// auth turned on so that the page has to ask for the virtual key and the admin token. Without
// Chromium the test is skipped, and fails in CI.
func TestPlayground(t *testing.T) {
	bin := node(t)
	needChromium(t)
	const key, admin = "sk-sluice-playground-e2e-0123456789", "playground-admin-e2e"
	cfg := config.Default()
	cfg.Logs.URL = "sqlite://" + filepath.Join(t.TempDir(), "logs.db") // not the default's ./data
	sum := sha256.Sum256([]byte(key))
	cfg.Keys = append(cfg.Keys, config.Key{Name: "playground", Hash: hex.EncodeToString(sum[:]), Models: []string{"*"}})
	cfg.Auth.AdminToken = admin
	srv, err := gateway.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(srv)
	defer srv.Close()
	defer gw.Close()

	shot := filepath.Join(t.TempDir(), "playground.png")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--test", "--test-reporter=spec", "--test-concurrency=1", "playground.test.mjs")
	cmd.Env = append(os.Environ(), "SLUICE_URL="+gw.URL, "SLUICE_KEY="+key, "SLUICE_ADMIN="+admin,
		"SLUICE_SHOT="+shot, "CHROMIUM="+chromiumPath, "NODE_NO_WARNINGS=1")
	cmd.WaitDelay = 10 * time.Second // Chromium left running must not hold the test
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("the playground's browser tests failed: %v", err)
	}
	if *update {
		b, err := os.ReadFile(shot)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "playground.png"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
