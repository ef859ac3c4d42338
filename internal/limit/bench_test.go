package limit

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// BenchmarkReserveReconcile is one request's work on a busy key: a reservation and its
// settlement, with a whole window of earlier reservations (300,000: a minute at 5,000
// requests/s) still in the logs.
func BenchmarkReserveReconcile(b *testing.B) {
	m := &Memory{}
	ctx := context.Background()
	rule := Rule{Limit: 1 << 40, Window: time.Hour}
	ask := func(id string) Ask {
		return Ask{Key: "k", ID: id, Requests: rule, Tokens: rule, Cost: 100}
	}
	for i := range 300_000 {
		if _, err := m.Reserve(ctx, ask(strconv.Itoa(i))); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		id := "r" + strconv.Itoa(i)
		if _, err := m.Reserve(ctx, ask(id)); err != nil {
			b.Fatal(err)
		}
		if err := m.Reconcile(ctx, "k", id, rule, 80); err != nil {
			b.Fatal(err)
		}
	}
}
