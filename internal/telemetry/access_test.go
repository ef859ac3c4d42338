package telemetry

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestLogAccess(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	LogAccess(context.Background(), log, &Access{ID: "r1", Method: "POST", Path: "/v1/chat/completions", Status: 502,
		Duration: 1500 * time.Microsecond, Model: "default", Target: "sim/echo", Attempts: 2, Kind: "unavailable",
		FirstText: 412 * time.Millisecond, Redactions: 3, KeyID: "key_1", KeyName: "team-a", Usage: &Usage{Total: 42}})
	line := buf.String()
	for _, want := range []string{"level=WARN", "id=r1", "status=502", "ms=1.5", "attempts=2", "ttft_ms=412", "redactions=3", "kind=unavailable", "key_id=key_1", "key_name=team-a", "tokens=42"} {
		if !strings.Contains(line, want) {
			t.Errorf("got %q, want it to contain %q", line, want)
		}
	}
}
