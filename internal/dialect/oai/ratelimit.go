package oai

import (
	"net/http"
	"strconv"
	"time"
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
