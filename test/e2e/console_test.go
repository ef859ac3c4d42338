package e2e

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/console"
	"github.com/sluice-gw/sluice/internal/gateway"
)

// TestConsole drives the operator console (/console/) in Chromium against a gateway on
// loopback serving the embedded default configuration with an admin token: sign-in, the
// Logs page, keys created, used, edited and revoked, captured hostile content shown as text,
// Usage, Health, sign-out (console.test.mjs). Without Chromium the test is skipped, and
// fails in CI. With -update it writes the screenshots of real data to docs/img/.
func TestConsole(t *testing.T) {
	bin := node(t)
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed; .ci/run installs it")
		}
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	const admin = "console-admin-e2e"
	cfg := config.Default()
	cfg.Auth.AdminToken = admin
	// PENDING issue 33 (request log): once the config has the log, turn content capture on
	// here, so that the browser reads real captured records (console.test.mjs skips the
	// steps that need /admin/logs while it answers 404), e.g.
	//   cfg.Logs = config.Logs{URL: "sqlite://" + filepath.Join(t.TempDir(), "logs.db"), Capture: "content"}
	srv, err := gateway.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(consoleSite(t, srv, admin))
	defer srv.Close()
	defer gw.Close()

	shots := os.Getenv("SLUICE_SHOTS") // to look at every screenshot, canned ones included
	if shots == "" {
		shots = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--test", "--test-reporter=spec", "--test-concurrency=1", "console.test.mjs")
	cmd.Env = append(os.Environ(), "SLUICE_URL="+gw.URL, "SLUICE_ADMIN="+admin, "SLUICE_SHOTS="+shots,
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

// consoleSite is the gateway as it serves the console. PENDING issue 33 (the server's
// wiring): until the server mounts internal/console itself, this puts the console in front
// of the gateway the way the server will: /console and /console/* to console.Handler, and
// an /admin/ request that carries no token of its own let through when console.Authorize
// approves its session (here by adding the admin token; the server will accept Authorize in
// its admin gate instead). Once the gateway answers /console/session itself, it is used as
// it is and this shim is dead code to delete.
func consoleSite(t *testing.T, gw http.Handler, admin string) http.Handler {
	probe := httptest.NewRecorder()
	gw.ServeHTTP(probe, httptest.NewRequest(http.MethodGet, "/console/session", nil))
	if probe.Code == http.StatusOK {
		return gw
	}
	t.Log("PENDING issue 33: the server does not mount internal/console yet; the test mounts it in front of the gateway")
	con := console.New(console.Options{Check: auth.NewToken(admin).Matches})
	mux := http.NewServeMux()
	mux.Handle("/console", con.Handler())
	mux.Handle("/console/", con.Handler())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/admin/") && r.Header.Get("Authorization") == "" && r.Header.Get("X-Api-Key") == "" &&
			con.Authorize(r) {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+admin)
		}
		gw.ServeHTTP(w, r)
	})
	return mux
}
