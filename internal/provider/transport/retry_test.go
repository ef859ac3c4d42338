package transport

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"none", http.Header{}, 0},
		{"seconds", http.Header{"Retry-After": {"20"}}, 20 * time.Second},
		{"fractional seconds", http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{"http date", http.Header{"Retry-After": {"Wed, 01 Jan 2025 12:00:30 GMT"}}, 30 * time.Second},
		{"date in the past", http.Header{"Retry-After": {"Wed, 01 Jan 2025 11:00:00 GMT"}}, 0},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0},
		// OpenAI's milliseconds header is the openai adapter's to read, not every upstream's.
		{"milliseconds are not Retry-After", http.Header{"Retry-After-Ms": {"250"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RetryAfter(tt.h, now); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
