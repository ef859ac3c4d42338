package server

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sluice-gw/sluice/internal/dialect/anthropic"
	"github.com/sluice-gw/sluice/internal/llm"
)

// writeError answers err before the first byte: the OpenAI error body with its status.
// Failures that come out of the chain carry x-should-retry: false, so the OpenAI SDKs do not
// replay a whole chain the gateway already walked.
func writeError(c echo.Context, err error) error {
	h := c.Response().Header()
	status, body := errorBody(c, err) // messages.go: the route's wire
	retryAfter(h, err)
	var le *llm.Error
	if errors.As(err, &le) {
		switch le.Kind {
		case llm.RateLimited, llm.Unavailable, llm.Auth, llm.Timeout, llm.Truncated, llm.Refused:
			if status != anthropic.StatusOverloaded { // Anthropic's SDKs retry an overloaded API
				h.Set("X-Should-Retry", "false")
			}
		}
	}
	if status == 499 {
		// The client left: nobody reads this, and the log line says 499.
		c.Response().Status = status
		return nil
	}
	return c.JSONBlob(status, body)
}

// retryAfter sets Retry-After, in whole seconds rounded up, for an error that says when a
// retry may pass, and returns that wait (0: none).
func retryAfter(h http.Header, err error) time.Duration {
	var le *llm.Error
	if !errors.As(err, &le) || le.RetryAfter <= 0 {
		return 0
	}
	h.Set("Retry-After", strconv.Itoa(int((le.RetryAfter+time.Second-1)/time.Second)))
	return le.RetryAfter
}

// httpError maps echo's own errors (unknown route, wrong method) to the OpenAI error body.
func httpError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		e := &llm.Error{Kind: llm.Invalid, Status: he.Code, Type: "invalid_request_error"}
		switch he.Code {
		case http.StatusNotFound:
			e.Message = "Unknown request URL: " + c.Request().Method + " " + c.Request().URL.Path + "."
			e.Code = "unknown_url"
		case http.StatusMethodNotAllowed:
			e.Message = "Method " + c.Request().Method + " is not allowed on " + c.Request().URL.Path + "."
		default:
			e.Message = http.StatusText(he.Code)
		}
		_, body := errorBody(c, e)
		_ = c.JSONBlob(he.Code, body)
		return
	}
	_ = writeError(c, err)
}
