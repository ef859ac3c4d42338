// Package limit decides whether a key may make a call now: requests and tokens per sliding
// window, reserved before the call and reconciled with the reported usage after it. The
// window is a log of reservations, not fixed buckets, so no burst at a window boundary can
// double a limit: at most Limit units fall in any span of one Window. Memory keeps the logs
// in this process; package redisstore keeps them in Redis for a fleet, with the same rules.
package limit

import (
	"context"
	"time"
)

// Rule is a limit of Limit units per sliding Window; Limit 0 means unlimited.
type Rule struct {
	Limit  int64
	Window time.Duration
}

// Ask is one reservation: a request, and Cost tokens (an estimate, reconciled later).
type Ask struct {
	Key      string // the key's id: whose logs
	ID       string // unique per reservation: Reconcile names it
	Requests Rule
	Tokens   Rule
	Cost     int64
}

// Status is one limit as the x-ratelimit-* headers tell it.
type Status struct {
	Limit     int64         // 0: not limited
	Remaining int64         // what is left in the window, after this reservation if it passed
	Reset     time.Duration // until the window is empty again
}

// Result is the verdict on an Ask. A reservation that did not pass took nothing.
type Result struct {
	OK               bool
	Requests, Tokens Status
	RetryAfter       time.Duration // when !OK: until the same ask could pass
	Never            bool          // when !OK: Cost alone is over the token limit; waiting cannot help
}

// Limiter reserves and reconciles. Implementations are safe for concurrent use. An error
// means the limiter could not decide (its store is unreachable): the caller refuses the
// request (redis.on_failure: closed); an implementation that fails open answers instead.
type Limiter interface {
	Reserve(ctx context.Context, a Ask) (Result, error)
	// Reconcile sets the reservation id of key to the tokens the call really used. A
	// reservation that left the window, or never passed, is ignored.
	Reconcile(ctx context.Context, key, id string, tokens Rule, used int64) error
	// Release removes the reservation id of key, its request and its tokens: a call that
	// another limit refused after this one passed (a key's, after its team's). A reservation
	// that left the window is ignored.
	Release(ctx context.Context, key, id string) error
}
