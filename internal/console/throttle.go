package console

import (
	"net/http"
	"strconv"
	"time"
)

// Throttle begins a sign-in with token ("": none) by r's client (auth.Throttle, shared by
// the replicas, wired by the gateway): wait > 0 refuses it for that long; otherwise end is
// called once, with whether it failed. An error is the throttle's store's (Redis
// unreachable under on_failure: closed).
type Throttle func(r *http.Request, token string) (wait time.Duration, end func(failed bool), err error)

// try begins a sign-in attempt with token; false when it was answered (429 with
// Retry-After, or 503), and end must not be called.
func (c *Console) try(w http.ResponseWriter, r *http.Request, token string) (end func(failed bool), ok bool) {
	if c.throttle == nil {
		return func(bool) {}, true
	}
	wait, end, err := c.throttle(r, token)
	switch {
	case err != nil:
		storeDown(w)
		return nil, false
	case wait > 0:
		w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
		fail(w, http.StatusTooManyRequests, "too_many_failed_attempts",
			"Too many failed sign-ins from this address or with this token. Retry after the time in Retry-After.")
		return nil, false
	}
	return end, true
}
