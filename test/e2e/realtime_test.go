package e2e

import (
	"context"
	"encoding/pem"
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

// serveDefault serves the embedded default configuration as `make run` does with no provider
// key (every alias on sim), changed by edit when it is not nil, over TLS when tls is set. It
// changes the working directory to a temporary one, where the default's request log
// (data/logs.db) is written: call node(t), which reads package-lock.json, before.
func serveDefault(t *testing.T, tls bool, edit func(*config.Config)) *httptest.Server {
	t.Helper()
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"} {
		t.Setenv(k, "") // restored after the test; the default then serves every alias with sim
		os.Unsetenv(k)
	}
	t.Chdir(t.TempDir())
	cfg := config.Default()
	if edit != nil {
		edit(cfg)
	}
	srv, err := gateway.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewUnstartedServer(srv)
	if tls {
		gw.StartTLS()
	} else {
		gw.Start()
	}
	t.Cleanup(func() {
		gw.CloseClientConnections() // a session a failed client left open
		gw.Close()
		srv.Close()
	})
	return gw
}

// TestRealtimeNodeSDK runs the official OpenAI SDK's Realtime WebSocket clients
// (realtime.test.mjs) against `GET /v1/realtime` of the embedded default, whose gpt-realtime
// alias is served by the simulation's echo with no provider key, with auth on: the Node
// client (openai/realtime/ws, over the pinned ws) with the key in Authorization, the
// browser client (openai/realtime/websocket) with the key in the openai-insecure-api-key
// subprotocol, a wrong key refused, and each session one record of the request log with its
// turns' usage. The SDK speaks only wss:, so the gateway is served over TLS and node trusts
// its certificate through NODE_EXTRA_CA_CERTS.
func TestRealtimeNodeSDK(t *testing.T) {
	bin := node(t)
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	const admin = "realtime-admin-e2e"
	gw := serveDefault(t, true, func(c *config.Config) { c.Auth.AdminToken = admin })
	ca := filepath.Join(t.TempDir(), "gateway.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: gw.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--test", "--test-reporter=spec", "realtime.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SLUICE_URL="+gw.URL, "SLUICE_ADMIN="+admin, "NODE_EXTRA_CA_CERTS="+ca, "NODE_NO_WARNINGS=1")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("the SDK's Realtime tests failed: %v", err)
	}
}
