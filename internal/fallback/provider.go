package fallback

import (
	"context"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Provider calls one upstream. Stream starts a streamed call of req (req.Model is the
// upstream's model name) and returns once the upstream answered with its status: a non-2xx
// answer or a connection failure is an *llm.Error with its Kind and Status. The returned stream
// is owned by the caller, who must Close it. Canceling ctx aborts the call and the stream. A
// provider that dials bounds its dial by ConnectTimeout(ctx).
type Provider interface {
	Stream(ctx context.Context, req *llm.Request) (llm.Stream, error)
}

type connectKey struct{}

// ConnectTimeout is the connect timeout of the attempt whose context is ctx (Timeouts.Connect),
// for the provider's dialer; false when the target sets none. The value survives
// context.WithoutCancel, as net/http's dial context is.
func ConnectTimeout(ctx context.Context) (time.Duration, bool) {
	d, ok := ctx.Value(connectKey{}).(time.Duration)
	return d, ok
}
