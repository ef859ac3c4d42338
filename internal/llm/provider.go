package llm

import (
	"context"
	"errors"
	"time"
)

// Provider calls one upstream. Stream starts a streamed call of req (req.Model is the
// upstream's model name) and returns once the upstream answered with its status: a non-2xx
// answer or a connection failure is an *Error with its Kind and Status. The returned stream
// is owned by the caller, who must Close it. Canceling ctx aborts the call and the stream. A
// provider that dials bounds its dial by ConnectTimeout(ctx).
//
// It lives here, not in the fallback chain that calls it, so that an adapter can state that
// it is one without knowing the chain.
type Provider interface {
	Stream(ctx context.Context, req *Request) (Stream, error)
}

type connectKey struct{}

// connectCtx carries an attempt's connect timeout: a context of its own, not WithValue,
// whose boxed time.Duration cost one more allocation per attempt.
type connectCtx struct {
	context.Context
	d time.Duration
}

// Value implements context.Context.
func (c *connectCtx) Value(key any) any {
	if key == (connectKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// WithConnectTimeout returns ctx carrying d as the connect timeout of the attempt, for the
// provider's dialer: the chain cannot see a dial, so it hands the value down this way.
func WithConnectTimeout(ctx context.Context, d time.Duration) context.Context {
	return &connectCtx{Context: ctx, d: d}
}

// ConnectTimeout is the connect timeout of the attempt whose context is ctx
// (WithConnectTimeout); false when the target sets none. The value survives
// context.WithoutCancel, as net/http's dial context is.
func ConnectTimeout(ctx context.Context) (time.Duration, bool) {
	c, ok := ctx.Value(connectKey{}).(*connectCtx)
	if !ok {
		return 0, false
	}
	return c.d, true
}

// ContextError is the error of an attempt whose ctx is done: Canceled when the client left,
// Timeout when a deadline passed, or the *Error the chain gave as the cancel cause (its own
// timeouts); nil while ctx is live. Adapters return it whatever their read saw.
func ContextError(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	cause := context.Cause(ctx)
	var le *Error
	if errors.As(cause, &le) {
		return le
	}
	if errors.Is(cause, context.DeadlineExceeded) {
		return &Error{Kind: Timeout, Message: cause.Error(), Err: cause}
	}
	return &Error{Kind: Canceled, Message: cause.Error(), Err: cause}
}
