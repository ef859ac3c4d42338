package mcpgw

import (
	"context"
	"io"
	"time"
)

// Bus carries cancellations between replicas: behind a balancer without stickiness, the
// notifications/cancelled of a call may reach a replica other than the one running it.
// Redis pub/sub in a fleet (redisstore.MCPCancels); nil: each replica cancels only its own
// calls.
type Bus interface {
	// Publish sends msg to every replica's subscription, this one's included.
	Publish(ctx context.Context, msg string) error
	// Subscribe calls fn with every message published, on one goroutine, until the
	// subscription is closed; it returns once the subscription is in place (or could not
	// be yet: it then keeps trying).
	Subscribe(ctx context.Context, fn func(msg string)) (io.Closer, error)
}

// cancelKey names a call: its session and its request id.
func cancelKey(sid string, id []byte) string { return sid + "\x00" + string(id) }

// cancelLocal cancels the call key names, if it runs on this replica.
func (g *Gateway) cancelLocal(key string) bool {
	g.mu.Lock()
	cancel := g.inflight[key]
	g.mu.Unlock()
	if cancel != nil {
		cancel(errCancelled)
	}
	return cancel != nil
}

// broadcast hands a cancellation this replica could not act on to the others.
func (g *Gateway) broadcast(key string) {
	if g.o.Bus == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := g.o.Bus.Publish(ctx, key); err != nil {
		g.o.Log.Warn("mcp gateway: a cancellation could not be passed to the other replicas", "err", err.Error())
	}
}

// Close ends the gateway's subscription to the other replicas' cancellations.
func (g *Gateway) Close() error {
	if g.sub != nil {
		return g.sub.Close()
	}
	return nil
}
