package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Kind classifies an error. The enum is append-only: values are stored in metrics and logs.
type Kind uint8

const (
	KindNone Kind = iota
	// Canceled: the client left. Never retried, never counted against a provider.
	Canceled
	// Invalid: the request is wrong; another model would refuse it too.
	Invalid
	// Auth: a provider refused the gateway's credentials (a configuration problem).
	Auth
	// RateLimited: a provider, or the gateway's own limits, said slow down.
	RateLimited
	// Unavailable: connection failure, 5xx, an error inside a 200 stream.
	Unavailable
	// Timeout: connect, first event, idle or total timeout.
	Timeout
	// Truncated: the stream ended before its finish, or its last event was cut.
	Truncated
	// Refused: a guardrail refused the request or the answer.
	Refused
	// NotFound: an unknown model or route.
	NotFound
	// Unauthenticated: the client's own key is missing or wrong.
	Unauthenticated
	// TooLarge: the request body is over the limit.
	TooLarge
	// Internal: a bug in the gateway.
	Internal
	// Unsupported: the target's API cannot carry the request as asked (n > 1, logprobs or a
	// JSON schema to Anthropic); nothing was sent. Another target may serve it, so the chain
	// moves on without a strike; when no target can, the client gets a 400.
	Unsupported
)

var kindNames = [...]string{"none", "canceled", "invalid", "auth", "rate_limited", "unavailable",
	"timeout", "truncated", "refused", "not_found", "unauthenticated", "too_large", "internal", "unsupported"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Error is an error with a Kind and what the client-facing error body needs. Message must
// never hold a secret: adapters build it from the provider's error message and code only.
type Error struct {
	Kind Kind
	// Status is the upstream HTTP status, when one came.
	Status int
	// Code, Type and Param are the OpenAI error body fields, when known.
	Code, Type, Param string
	Message           string
	// Target is the "provider/model" that failed, when the error comes from one.
	Target string
	// RetryAfter is the upstream's Retry-After, when it sent one.
	RetryAfter time.Duration
	Err        error
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if msg == "" {
		msg = e.Kind.String()
	}
	if e.Target != "" {
		return e.Target + ": " + msg
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Scrub masks, in text an upstream wrote, what must never leave the gateway: the gateway's
// own credentials for its providers and the secrets the redaction detectors know (an
// upstream, or a proxy in front of it, may quote the request's headers in an error). One is
// built from the configuration at start; adapters apply it where upstream text becomes an
// *Error, so every later path (the client's error, attempt reasons, logs, spans) carries
// masked text only. A nil Scrub leaves text unchanged.
type Scrub func(string) string

// Error masks the upstream's text in e (Message, Code, Type, Param) in place and returns e.
func (s Scrub) Error(e *Error) *Error {
	if s != nil && e != nil {
		e.Message, e.Code, e.Type, e.Param = s(e.Message), s(e.Code), s(e.Type), s(e.Param)
	}
	return e
}

// Errorf returns an *Error of kind k with a formatted message.
func Errorf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// KindOf returns the kind of err: the Kind of the first *Error in its chain, Canceled for a
// context cancellation, Timeout for a deadline, Internal for anything else, KindNone for nil.
func KindOf(err error) Kind {
	if err == nil {
		return KindNone
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	switch {
	case errors.Is(err, context.Canceled):
		return Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return Timeout
	}
	return Internal
}

// HTTPStatus is the status the gateway answers for err before the first byte. Request errors
// an upstream returned keep its status; everything an upstream did wrong is the gateway's 502.
func HTTPStatus(err error) int {
	var e *Error
	if errors.As(err, &e) && (e.Kind == Invalid || e.Kind == Refused) && e.Status >= 400 && e.Status < 500 {
		// A guardrail that blocks a request (not its answer) says 400.
		return e.Status
	}
	if e != nil && e.Kind == Unavailable && e.Status == http.StatusServiceUnavailable {
		// The chain's own answer when every target is cooling down (fallback.CodeAllCooling).
		return http.StatusServiceUnavailable
	}
	switch KindOf(err) {
	case KindNone:
		return http.StatusOK
	case Canceled:
		return 499
	case Invalid, Unsupported:
		return http.StatusBadRequest
	case RateLimited:
		return http.StatusTooManyRequests
	case Timeout:
		return http.StatusGatewayTimeout
	case Refused:
		return http.StatusUnprocessableEntity
	case NotFound:
		return http.StatusNotFound
	case Unauthenticated:
		return http.StatusUnauthorized
	case TooLarge:
		return http.StatusRequestEntityTooLarge
	case Internal:
		return http.StatusInternalServerError
	}
	return http.StatusBadGateway // Auth, Unavailable, Truncated
}

// Retryable reports whether a failure before commit may fall back to the next target.
func Retryable(k Kind) bool {
	switch k {
	case Auth, RateLimited, Unavailable, Timeout, Truncated, Unsupported:
		return true
	}
	return false
}
