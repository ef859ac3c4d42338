package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/config"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// BenchmarkAccessLine is one request's access line as the gateway writes it (issue 51): the
// JSON logger cmd/gateway makes on a file, behind the mask of the gateway's own secrets.
func BenchmarkAccessLine(b *testing.B) {
	rules, err := onlyOwn(ownSecrets(&config.Config{Auth: config.Auth{AdminToken: "admin-token-of-the-gateway-7"}}))
	if err != nil {
		b.Fatal(err)
	}
	a := &telemetry.Access{ID: "01a24d7283e3e1c3a26ae60a", Record: "01a24d7283e3e1c3a26ae60a", Method: "POST",
		Path: "/v1/chat/completions", Status: 200, Duration: 1354 * time.Microsecond, Model: "mock/text?len=200&chunk=10",
		Target: "mock/text?len=200&chunk=10", Attempts: 1, FirstEvent: time.Millisecond, FirstText: time.Millisecond,
		KeyID: "cfg_36e40e3794b62902", KeyName: "bench"}
	ctx := context.Background()
	// A line written at once (the default), and held with the next (SLUICE_LOG_FLUSH=100ms).
	for _, run := range []struct {
		format string
		flush  time.Duration
	}{{"json", 0}, {"text", 0}, {"json", 100 * time.Millisecond}} {
		format, flush := run.format, run.flush
		b.Run(fmt.Sprintf("%s/flush=%s", format, flush), func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "log"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			tl, closeLog := telemetry.NewLogger(f, format, flush)
			defer closeLog()
			log := masked(tl, rules.Redact)
			b.ReportAllocs()
			for b.Loop() {
				telemetry.LogAccess(ctx, log, a)
			}
		})
	}
}

var _ = slog.LevelInfo
