package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestKindOfAndStatus(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		kind   Kind
		status int
	}{
		{"nil", nil, KindNone, 200},
		{"wrapped rate limit", fmt.Errorf("call: %w", &Error{Kind: RateLimited}), RateLimited, 429},
		{"canceled", context.Canceled, Canceled, 499},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), Timeout, 504},
		{"plain error is a bug", errors.New("boom"), Internal, 500},
		{"upstream 422 kept", &Error{Kind: Invalid, Status: 422}, Invalid, 422},
		{"invalid without status", &Error{Kind: Invalid}, Invalid, 400},
		{"upstream 401 is the gateway's problem", &Error{Kind: Auth, Status: 401}, Auth, 502},
		{"truncated", &Error{Kind: Truncated}, Truncated, 502},
		{"not found", &Error{Kind: NotFound}, NotFound, 404},
		{"too large", &Error{Kind: TooLarge}, TooLarge, 413},
		{"no target can carry it", &Error{Kind: Unsupported, Status: 400}, Unsupported, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := KindOf(tt.err); got != tt.kind {
				t.Errorf("got kind %v, want %v", got, tt.kind)
			}
			if got := HTTPStatus(tt.err); got != tt.status {
				t.Errorf("got status %d, want %d", got, tt.status)
			}
		})
	}
}

func TestErrorMessageNamesTarget(t *testing.T) {
	e := &Error{Kind: Unavailable, Target: "openai/gpt-4.1-mini", Message: "server_error"}
	if got, want := e.Error(), "openai/gpt-4.1-mini: server_error"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !Retryable(Unavailable) || Retryable(Invalid) || Retryable(Canceled) {
		t.Errorf("got the wrong retryable kinds")
	}
}

// Scrub.Error masks every field an upstream wrote, in place; a nil Scrub changes nothing.
func TestScrubError(t *testing.T) {
	up := func() *Error {
		return &Error{Kind: Invalid, Status: 400, Message: "m KEY", Code: "c KEY", Type: "t KEY", Param: "p KEY", Target: "a/b"}
	}
	var none Scrub
	if got := none.Error(up()); *got != *up() {
		t.Errorf("got %+v from a nil Scrub, want it unchanged", got)
	}
	s := Scrub(func(v string) string { return strings.ReplaceAll(v, "KEY", "***") })
	want := Error{Kind: Invalid, Status: 400, Message: "m ***", Code: "c ***", Type: "t ***", Param: "p ***", Target: "a/b"}
	if got := s.Error(up()); *got != want {
		t.Errorf("got %+v, want %+v", *got, want)
	}
}
