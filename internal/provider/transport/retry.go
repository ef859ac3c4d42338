package transport

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryAfter parses Retry-After (seconds or an HTTP date, RFC 9110 §10.2.3) as of now; 0
// when absent or unparseable.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
