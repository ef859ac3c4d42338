package fallback

import (
	"context"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Provider calls one upstream. Stream starts a streamed call of req (req.Model is the
// upstream's model name) and returns once the upstream answered with its status: a non-2xx
// answer or a connection failure is an *llm.Error with its Kind and Status. The returned stream
// is owned by the caller, who must Close it. Canceling ctx aborts the call and the stream.
type Provider interface {
	Stream(ctx context.Context, req *llm.Request) (llm.Stream, error)
}
