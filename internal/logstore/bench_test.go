package logstore

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
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
		benchWriter(b, mustOpen(b, "sqlite://"+filepath.Join(b.TempDir(), "logs.db"), 0), nil)
	})
	b.Run("postgres", func(b *testing.B) {
		srv := pgtest.Start(b)
		st := mustOpen(b, srv.URL, 0)
		b.ResetTimer()
		benchWriter(b, st, func() time.Duration { return pgCPU(b, srv) })
	})
}

// benchWriter reports the process's CPU a record, and the database's when dbCPU tells it
// (PostgreSQL's processes are not the test's children).
func benchWriter(b *testing.B, st Store, dbCPU func() time.Duration) {
	run := benchRun.Add(1)
	w := NewWriter(st, WriterOptions{Queue: 20000, Batch: 500, Every: 50 * time.Millisecond})
	now := time.Now()
	b.ReportAllocs()
	var db0 time.Duration
	if dbCPU != nil {
		db0 = dbCPU()
	}
	cpu0 := cpuTime()
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
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/record")
	if dbCPU != nil {
		b.ReportMetric(float64((dbCPU()-db0).Microseconds())/float64(b.N), "db-cpu-µs/record")
	}
}

// pgCPU is the CPU time so far of the cluster's postmaster and its children (the backends
// among them), from /proc: clock ticks of 10 ms, so a run needs some seconds of it.
func pgCPU(b *testing.B, srv *pgtest.Server) time.Duration {
	pidFile, err := os.ReadFile(filepath.Join(srv.Dir, "data", "postmaster.pid"))
	if err != nil {
		b.Fatal(err)
	}
	master, _, _ := strings.Cut(string(pidFile), "\n")
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks int64
	for _, p := range procs {
		stat, err := os.ReadFile(p)
		if err != nil {
			continue // ended meanwhile
		}
		// pid (comm) state ppid ... utime stime: fields 14 and 15, counted after the comm,
		// which may hold spaces.
		_, rest, _ := strings.Cut(string(stat), ") ")
		f := strings.Fields(rest)
		pid := strings.TrimPrefix(p, "/proc/")
		pid = strings.TrimSuffix(pid, "/stat")
		if len(f) < 13 || pid != master && f[1] != master {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + s
	}
	return time.Duration(ticks) * 10 * time.Millisecond
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

// BenchmarkWriterPaced is the writer's cost when records come one at a time, as requests
// end (1,000 a second, a ticker's), into a store that takes every write at once: what the
// process spends a record, the pacing's own wakeups included. Compare two builds with
// `perf stat -e context-switches,syscalls:sys_enter_futex` on unpinned cores, where a
// writer woken for each record costs a thread's wakeup.
func BenchmarkWriterPaced(b *testing.B) {
	w := NewWriter(nullStore{newMem()}, WriterOptions{})
	r := rec(1, time.Now())
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		<-tick.C
		w.Add(r)
	}
	if err := w.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/record")
}

// BenchmarkWriterIDs is the writer into an SQLite log that already holds 200,000 records,
// with the request ids the gateway made before (random) and makes now (time-ordered,
// telemetry.RequestID). Random ids land on random pages of the id index, so every record
// of a batch dirties a page of its own once the index outgrows the page cache.
func BenchmarkWriterIDs(b *testing.B) {
	for _, order := range []string{"random", "ordered"} {
		b.Run(order, func(b *testing.B) {
			st := mustOpen(b, "sqlite://"+filepath.Join(b.TempDir(), "logs.db"), 0)
			id := func(at time.Time) string {
				var x [12]byte // as telemetry.RequestID makes them
				if order == "ordered" {
					binary.BigEndian.PutUint64(x[:8], uint64(at.UnixMilli())<<16)
				}
				_, _ = crand.Read(x[len(x)-6:])
				if order == "random" {
					_, _ = crand.Read(x[:])
				}
				return hex.EncodeToString(x[:])
			}
			start := time.Now().Add(-time.Hour)
			const fill = 200000
			for i := 0; i < fill; i += 500 {
				batch := make([]Record, 500)
				for j := range batch {
					at := start.Add(time.Duration(i+j) * 10 * time.Microsecond)
					batch[j] = rec(i+j, at)
					batch[j].ID = id(at)
				}
				if err := st.Write(context.Background(), batch); err != nil {
					b.Fatal(err)
				}
			}
			w := NewWriter(st, WriterOptions{Queue: 20000, Batch: 500, Every: 50 * time.Millisecond})
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := range b.N {
				for len(w.queue) > cap(w.queue)/2 {
					time.Sleep(100 * time.Microsecond)
				}
				at := start.Add(time.Duration(fill+i) * 10 * time.Microsecond)
				r := rec(i, at)
				r.ID = id(at)
				w.Add(r)
			}
			if err := w.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/record")
		})
	}
}

// cpuTime is the process's user and system time so far: the writer's cost, whatever else the
// machine runs.
func cpuTime() time.Duration {
	var u syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// BenchmarkRowsOf is the writer's own work on a batch of 500 before the store's: each record
// prepared and split into columns, its document encoded.
func BenchmarkRowsOf(b *testing.B) {
	now := time.Now()
	rs := make([]Record, 500)
	for i := range rs {
		rs[i] = rec(i, now)
		rs[i].UserAgent, rs[i].TraceID = "openai-python/1.54.0", "4bf92f3577b34da6a3ce929d0e0e4736"
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := rowsOf(rs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N*len(rs)), "cpu-ns/record")
}
