package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/limit"
	"github.com/sluice-gw/sluice/internal/llm"
)

// reservation is what a request holds of its key's limits until the handler is done.
type reservation struct {
	id     string
	tokens limit.Rule
}

// reserve takes one request and cost tokens from key's limits, and sets the x-ratelimit-*
// headers OpenAI clients read, on refusals and answers alike. nil without limits.
func (s *Server) reserve(c echo.Context, key *auth.Key, cost int64) (*reservation, error) {
	g := &s.o.Gate
	if g.Limiter == nil || (key.RPM <= 0 && key.TPM <= 0) {
		return nil, nil
	}
	a, window := g.ask(key, cost)
	res, err := g.Limiter.Reserve(c.Request().Context(), a)
	if err != nil {
		return nil, stateUnavailable()
	}
	h := c.Response().Header()
	setLimitHeaders(h, "requests", res.Requests)
	setLimitHeaders(h, "tokens", res.Tokens)
	if !res.OK {
		return nil, limited(key, a, res, window, h)
	}
	return &reservation{id: a.ID, tokens: a.Tokens}, nil
}

// ask is a reservation of one request and cost tokens of key's limits, with a fresh id, and
// the limits' window.
func (g *Gate) ask(key *auth.Key, cost int64) (limit.Ask, time.Duration) {
	window := g.Window
	if window <= 0 {
		window = time.Minute
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return limit.Ask{Key: key.ID, ID: hex.EncodeToString(b[:]), Requests: limit.Rule{Limit: key.RPM, Window: window},
		Tokens: limit.Rule{Limit: key.TPM, Window: window}, Cost: cost}, window
}

func setLimitHeaders(h http.Header, what string, st limit.Status) {
	if st.Limit <= 0 {
		return
	}
	h.Set("X-Ratelimit-Limit-"+what, strconv.FormatInt(st.Limit, 10))
	h.Set("X-Ratelimit-Remaining-"+what, strconv.FormatInt(st.Remaining, 10))
	// OpenAI's format: a Go-style duration ("1s", "6m0s", "250ms").
	h.Set("X-Ratelimit-Reset-"+what, max(st.Reset, 0).Round(time.Millisecond).String())
}

// limited is the 429 of a refused reservation. The message names the key and the limit,
// never the key itself.
func limited(key *auth.Key, a limit.Ask, res limit.Result, window time.Duration, h http.Header) error {
	per := "per minute"
	if window != time.Minute {
		per = "per " + window.String()
	}
	e := &llm.Error{Kind: llm.RateLimited, Code: "rate_limit_exceeded", Type: "rate_limit_error", RetryAfter: res.RetryAfter}
	switch {
	case res.Never:
		// Waiting cannot help: no retry, whatever the SDK's policy for 429.
		h.Set("X-Should-Retry", "false")
		e.RetryAfter = 0
		e.Message = fmt.Sprintf("Request too large for key '%s' on tokens %s: limit %d, requested about %d. "+
			"Send a shorter prompt or a lower max_tokens.", key.Name, per, a.Tokens.Limit, a.Cost)
	case a.Requests.Limit > 0 && res.Requests.Remaining == 0:
		e.Message = fmt.Sprintf("Rate limit reached for key '%s' on requests %s: limit %d. Try again in %s.",
			key.Name, per, a.Requests.Limit, res.RetryAfter.Round(time.Millisecond))
	default:
		e.Message = fmt.Sprintf("Rate limit reached for key '%s' on tokens %s: limit %d, remaining %d, requested about %d. Try again in %s.",
			key.Name, per, a.Tokens.Limit, res.Tokens.Remaining, a.Cost, res.RetryAfter.Round(time.Millisecond))
	}
	return e
}

// reconcile corrects the token reservation with what the call used: the usage the handler
// recorded; nothing for an error answered before any output (the upstream charged none);
// and when a handler served without knowing the usage, the estimate stands.
func (s *Server) reconcile(c echo.Context, key *auth.Key, r *reservation) {
	if r == nil || key.TPM <= 0 {
		return
	}
	var used int64
	switch in := reqInfo(c); {
	case in.Usage != nil:
		used = int64(in.Usage.Total)
		if used == 0 {
			used = int64(in.Usage.Prompt + in.Usage.Completion)
		}
	case c.Response().Status >= 400:
	default:
		return
	}
	// The client may have left: the accounting still happens.
	ctx := context.WithoutCancel(c.Request().Context())
	_ = s.o.Gate.Limiter.Reconcile(ctx, key.ID, r.id, r.tokens, used)
}
