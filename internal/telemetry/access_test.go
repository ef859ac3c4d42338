package telemetry

import (
	"bytes"
	"context"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

func TestLogAccess(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	LogAccess(context.Background(), log, &Access{ID: "r1", Method: "POST", Path: "/v1/chat/completions", Status: 502,
		Duration: 1500 * time.Microsecond, Model: "default", Target: "sim/echo", Attempts: 2, Kind: llm.Unavailable,
		FirstText: 412 * time.Millisecond, Redactions: 3, KeyID: "key_1", KeyName: "team-a", Usage: &Usage{Prompt: 40, Completion: 2, Total: 42},
		CostUSD: 0.0125, Overhead: 250 * time.Microsecond})
	line := buf.String()
	for _, want := range []string{"level=WARN", "id=r1", "status=502", "ms=1.5", "attempts=2", "ttft_ms=412", "redactions=3",
		"kind=unavailable", "key_id=key_1", "key_name=team-a", "tokens=42", "tokens_in=40", "tokens_out=2", "cost_usd=0.0125",
		"overhead_ms=0.25", `trace_id=""`} {
		if !strings.Contains(line, want) {
			t.Errorf("got %q, want it to contain %q", line, want)
		}
	}
}

// A client that left is not an error: info, whatever its status.
func TestLogAccessCanceled(t *testing.T) {
	var buf bytes.Buffer
	LogAccess(context.Background(), slog.New(slog.NewJSONHandler(&buf, nil)), &Access{ID: "r2", Status: 499, Kind: llm.Canceled})
	if !strings.Contains(buf.String(), `"level":"INFO"`) {
		t.Errorf("got %s, want level INFO", buf.String())
	}
}

// The level follows the outcome's kind, not the status: a stream that failed after its 200
// is a warning, a client's mistake with a 4xx is not, the gateway's own failure is an error.
func TestLogAccessLevel(t *testing.T) {
	for _, c := range []struct {
		kind   llm.Kind
		status int
		want   string
	}{
		{llm.KindNone, 200, "INFO"},
		{llm.Truncated, 200, "WARN"}, // cut after the answer started
		{llm.Timeout, 200, "WARN"},
		{llm.Unavailable, 502, "WARN"},
		{llm.Auth, 502, "WARN"},
		{llm.Internal, 500, "ERROR"},
		{llm.Internal, 200, "ERROR"},
		{llm.Invalid, 400, "INFO"},
		{llm.RateLimited, 429, "INFO"},
		{llm.Refused, 422, "INFO"},
		{llm.Canceled, 499, "INFO"},
		{llm.KindNone, 500, "WARN"}, // no kind: an echo error or a panic
	} {
		var buf bytes.Buffer
		LogAccess(context.Background(), slog.New(slog.NewJSONHandler(&buf, nil)), &Access{ID: "r", Status: c.status, Kind: c.kind})
		if !strings.Contains(buf.String(), `"level":"`+c.want+`"`) {
			t.Errorf("kind %v, status %d: got %s, want level %s", c.kind, c.status, buf.String(), c.want)
		}
	}
}

func TestRequestID(t *testing.T) {
	for _, h := range []string{"req-42", "a/b:c", strings.Repeat("x", 128)} {
		if got := RequestID(h); got != h {
			t.Errorf("RequestID(%q) = %q, want the caller's id", h, got)
		}
	}
	made := regexp.MustCompile(`^[0-9a-f]{24}$`)
	seen := map[string]bool{}
	for _, h := range []string{"", "has space", "tab\t", "é", strings.Repeat("x", 129)} {
		id := RequestID(h)
		if !made.MatchString(id) || seen[id] {
			t.Errorf("RequestID(%q) = %q, want a new 24-hex id", h, id)
		}
		seen[id] = true
	}
	// Made ids sort by time (a millisecond apart at least), so the log's indexes grow at the end.
	a := RequestID("")
	time.Sleep(2 * time.Millisecond)
	if b := RequestID(""); b <= a {
		t.Errorf("an id made later sorts first: %s then %s", a, b)
	}
}
