package oai

import (
	"net/http"
	"strconv"
	"time"

	"github.com/sluice-gw/sluice/internal/limit"
)

// rateLimitKeys are the canonical names of the three headers of each limit, built once:
// every answer of a key with limits carries six, and canonicalizing them per request was
// most of what setting them cost.
var rateLimitKeys = map[string][3]string{
	"requests": rateLimitNames("Requests"),
	"tokens":   rateLimitNames("Tokens"),
}

func rateLimitNames(what string) [3]string {
	return [3]string{"X-Ratelimit-Limit-" + what, "X-Ratelimit-Remaining-" + what, "X-Ratelimit-Reset-" + what}
}

// RateHeaders sets the x-ratelimit-* headers OpenAI clients read from the rate limiter's
// verdict res, and x-should-retry: false when waiting cannot help.
func RateHeaders(h http.Header, res limit.Result) {
	RateLimit(h, "requests", res.Requests.Limit, res.Requests.Remaining, res.Requests.Reset)
	RateLimit(h, "tokens", res.Tokens.Limit, res.Tokens.Remaining, res.Tokens.Reset)
	if res.Never {
		h.Set("X-Should-Retry", "false") // whatever the SDK's policy for 429
	}
}

// RateLimit sets OpenAI's x-ratelimit-* headers of one limit (what: "requests" or
// "tokens"): its size, what is left of it, and when its window is empty again, as a Go
// duration ("1s", "6m0s", "250ms"), OpenAI's format. A limit of 0 (none) sets nothing.
func RateLimit(h http.Header, what string, limit, remaining int64, reset time.Duration) {
	if limit <= 0 {
		return
	}
	keys, ok := rateLimitKeys[what]
	if !ok {
		keys = rateLimitNames(http.CanonicalHeaderKey("x-" + what)[2:])
	}
	// The three values share one string and their slices one array: two allocations.
	var buf [64]byte
	b := strconv.AppendInt(buf[:0], limit, 10)
	n1 := len(b)
	b = strconv.AppendInt(b, remaining, 10)
	n2 := len(b)
	b = append(b, max(reset, 0).Round(time.Millisecond).String()...)
	s := string(b)
	vals := [3]string{s[:n1], s[n1:n2], s[n2:]}
	arr := vals[:]
	for i, k := range keys {
		h[k] = arr[i : i+1 : i+1]
	}
}
