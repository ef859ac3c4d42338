package oai

import (
	"net/http"
	"strconv"
	"time"
)

// RateLimit sets OpenAI's x-ratelimit-* headers of one limit (what: "requests" or
// "tokens"): its size, what is left of it, and when its window is empty again, as a Go
// duration ("1s", "6m0s", "250ms"), OpenAI's format. A limit of 0 (none) sets nothing.
func RateLimit(h http.Header, what string, limit, remaining int64, reset time.Duration) {
	if limit <= 0 {
		return
	}
	h.Set("X-Ratelimit-Limit-"+what, strconv.FormatInt(limit, 10))
	h.Set("X-Ratelimit-Remaining-"+what, strconv.FormatInt(remaining, 10))
	h.Set("X-Ratelimit-Reset-"+what, max(reset, 0).Round(time.Millisecond).String())
}
