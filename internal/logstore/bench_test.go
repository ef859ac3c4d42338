package logstore

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/logstore/pgtest"
)

var benchRun atomic.Int64

// BenchmarkWriter is the writer's sustained rate into each store (the issue wants 5,000
// records/s): records go in as fast as the queue drains (never dropped), and the time ends
// when Close has written the last one. One record in six carries captured content.
func BenchmarkWriter(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		benchWriter(b, mustOpen(b, "sqlite://"+filepath.Join(b.TempDir(), "logs.db"), 0))
	})
	b.Run("postgres", func(b *testing.B) {
		srv := pgtest.Start(b)
		st := mustOpen(b, srv.URL, 0)
		b.ResetTimer()
		benchWriter(b, st)
	})
}

func benchWriter(b *testing.B, st Store) {
	run := benchRun.Add(1)
	w := NewWriter(st, WriterOptions{Queue: 20000, Batch: 500, Every: 50 * time.Millisecond})
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		for len(w.queue) > cap(w.queue)/2 {
			time.Sleep(100 * time.Microsecond) // let the writer drain: a rate, not drops
		}
		r := rec(i, now.Add(-time.Duration(i)*time.Microsecond))
		r.ID = fmt.Sprintf("bench_%d_%d", run, i)
		w.Add(r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if w.Dropped() != 0 {
		b.Fatalf("dropped %d records", w.Dropped())
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// nullStore takes every write at once: what Add costs the request path, without a store.
type nullStore struct{ *memStore }

func (nullStore) Write(context.Context, []Record) error { return nil }

// BenchmarkAdd is what a request pays to log itself (many requests at once).
func BenchmarkAdd(b *testing.B) {
	w := NewWriter(nullStore{newMem()}, WriterOptions{})
	defer w.Close(context.Background())
	r := rec(1, time.Now())
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w.Add(r)
		}
	})
}
