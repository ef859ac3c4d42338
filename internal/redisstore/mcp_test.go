package redisstore_test

import (
	"context"
	"testing"
	"time"
)

// An MCP session put on one replica is read (and renewed) on another and deleted from
// either; a cancellation published on one reaches the other's subscription (sharded pub/sub
// on a cluster).
func TestMCPAcrossReplicas(t *testing.T) {
	forms(t, func(t *testing.T, srv backend) {
		a, b := replica(t, srv, false, nil), replica(t, srv, false, nil)
		ctx := context.Background()
		if err := a.MCPSessions().Put(ctx, "s1", []byte(`{"tools":1}`), time.Minute); err != nil {
			t.Fatal(err)
		}
		if got, err := b.MCPSessions().Get(ctx, "s1", time.Hour); string(got) != `{"tools":1}` || err != nil {
			t.Fatalf("other replica: got %q, %v", got, err)
		}
		if ttl, err := srv.Do("PTTL", "sluice:mcp:session:s1"); err != nil || len(ttl) < 5 {
			t.Errorf("after a Get with an hour: got PTTL %q, %v, want the TTL renewed", ttl, err)
		}
		if err := b.MCPSessions().Delete(ctx, "s1"); err != nil {
			t.Fatal(err)
		}
		if got, err := a.MCPSessions().Get(ctx, "s1", time.Hour); got != nil || err != nil {
			t.Errorf("after Delete: got %q, %v, want nil, nil", got, err)
		}

		got := make(chan string, 1)
		sub, err := b.MCPCancels().Subscribe(ctx, func(m string) { got <- m })
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		if err := a.MCPCancels().Publish(ctx, `{"id":7}`); err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-got:
			if m != `{"id":7}` {
				t.Errorf("got %q, want the message published", m)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the subscription got nothing within 10s")
		}
	})
}
