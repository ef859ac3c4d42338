package auth

import (
	"context"
	"time"
)

type keyKey struct{}

// WithKey returns ctx carrying k, the virtual key a request is served as: the files and
// batches service sets it for the hosts it calls, and the gateway's own in-process
// requests (an emulated batch's lines, issue 48) carry their owner's key in it. A context value can only be set
// inside the process: no header or body of a client can reach it.
func WithKey(ctx context.Context, k *Key) context.Context {
	return context.WithValue(ctx, keyKey{}, k)
}

// KeyFrom returns the key ctx carries, or nil.
func KeyFrom(ctx context.Context) *Key {
	k, _ := ctx.Value(keyKey{}).(*Key)
	return k
}

// Caller is the key a request is served as: the one its context carries (the gateway's own
// in-process request, WithKey), else the one whose secret it sent (Authenticate).
func (ks *Keys) Caller(ctx context.Context, secret string, now time.Time) (*Key, error) {
	if k := KeyFrom(ctx); k != nil {
		return k, nil
	}
	return ks.Authenticate(ctx, secret, now)
}
