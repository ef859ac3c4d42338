package transport

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

func TestStatusError(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		msg     string
		kind    llm.Kind
		message string
		retry   time.Duration
	}{
		{"400 keeps the words", 400, "bad temperature", llm.Invalid, "bad temperature", 0},
		{"422", 422, "field required", llm.Invalid, "field required", 0},
		{"401 never the words", 401, "key sk-123 is wrong", llm.Auth, "up refused the gateway's credentials (HTTP 401)", 0},
		{"429", 429, "slow down", llm.RateLimited, "up rate limit (HTTP 429): slow down", time.Second},
		{"402 unexpected", 402, "pay", llm.Unavailable, "up answered HTTP 402: pay", time.Second},
		{"529 overloaded", 529, "overloaded_error", llm.Unavailable, "up answered HTTP 529: overloaded_error", time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind := StatusKind(tt.status)
			if kind != tt.kind {
				t.Fatalf("got kind %v, want %v", kind, tt.kind)
			}
			e := StatusError("up", kind, tt.status, fmt.Sprintf("HTTP %d", tt.status), tt.msg, time.Second)
			if e.Status != tt.status || e.Message != tt.message || e.RetryAfter != tt.retry {
				t.Errorf("got %d %q %v, want %d %q %v", e.Status, e.Message, e.RetryAfter, tt.status, tt.message, tt.retry)
			}
		})
	}
}

func TestErrorMessage(t *testing.T) {
	tests := []struct {
		name, parsed, body string
		status             int
		want               string
	}{
		{"parsed", "from JSON", `{"error":{"message":"from JSON"}}`, 400, "from JSON"},
		{"plain text", "", "request too large\n", 413, "request too large"},
		{"JSON without one", "", `{"error":{}}`, 500, "Internal Server Error"},
		{"HTML page", "", "<html>bad gateway</html>", 502, "Bad Gateway"},
		{"not UTF-8", "", "\xff\xfe", 503, "Service Unavailable"},
		{"no status text", "", "", 529, ""},
	}
	for _, tt := range tests {
		if got := ErrorMessage(tt.parsed, []byte(tt.body), tt.status); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
