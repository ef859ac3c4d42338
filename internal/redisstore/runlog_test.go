package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/runs"
)

func runLog(t *testing.T, srv backend) *redisstore.RunLog {
	t.Helper()
	l := replica(t, srv, true, nil).RunLog()
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func frames(from, to int64) []runs.Frame {
	var out []runs.Frame
	for i := from; i <= to; i++ {
		out = append(out, runs.Frame{Seq: i, Data: []byte(fmt.Sprintf("id: r-%d\ndata: {}\n\n", i))})
	}
	return out
}

// The run log's rules: one owner per run, batches written once, the length cap, stop and
// loss reported to the owner, blocking reads, and the reap of a run whose lease lapsed.
func TestRunLog(t *testing.T) {
	forms(t, func(t *testing.T, srv backend) {
		a, b := runLog(t, srv), runLog(t, srv)
		ctx := context.Background()
		lease, ttl := 300*time.Millisecond, time.Minute
		m := runs.Meta{Chat: "c1", Run: "r1", Key: "k1", Proto: "v7"}
		if err := a.Claim(ctx, m, "A", lease, ttl); err != nil {
			t.Fatal(err)
		}
		other := m
		other.Run, other.Key = "r2", "k2"
		if err := b.Claim(ctx, other, "B", lease, ttl); !errors.Is(err, runs.ErrBusy) {
			t.Errorf("claim by another key of an active chat: got %v, want ErrBusy", err)
		}
		w := runs.Write{Chat: "c1", Run: "r1", Owner: "A", Frames: frames(1, 5), Lease: lease, TTL: ttl, MaxFrames: 8}
		if v, err := a.Append(ctx, w); err != nil || v != (runs.Verdict{}) {
			t.Fatalf("append: got %+v %v", v, err)
		}
		w.Frames = frames(3, 10) // a retried batch overlapping the first
		if _, err := a.Append(ctx, w); err != nil {
			t.Fatal(err)
		}
		got, err := b.Read(ctx, "c1", "r1", 0, 100)
		if err != nil || len(got) != 8 || got[0].Seq != 3 || string(got[7].Data) != string(frames(10, 10)[0].Data) {
			t.Errorf("read: got %d frames from %d, %v; want 3..10 (the cap keeps 8)", len(got), first(got), err)
		}
		meta, err := b.Lookup(ctx, "c1")
		if err != nil || meta == nil || meta.Seq != 10 || meta.First(8) != 3 || meta.Key != "k1" || meta.Proto != "v7" || meta.Lapsed {
			t.Fatalf("lookup: got %+v %v", meta, err)
		}
		// A blocking read wakes on the next batch.
		done := make(chan []runs.Frame)
		go func() {
			fs, _ := b.Wait(ctx, "c1", "r1", 10, 5*time.Second)
			done <- fs
		}()
		time.Sleep(50 * time.Millisecond)
		w.Frames = frames(11, 12)
		if _, err := a.Append(ctx, w); err != nil {
			t.Fatal(err)
		}
		if fs := <-done; len(fs) != 2 || fs[0].Seq != 11 {
			t.Errorf("wait: got %d frames, want 11 and 12", len(fs))
		}
		if fs, err := b.Wait(ctx, "c1", "r1", 12, 50*time.Millisecond); err != nil || len(fs) != 0 {
			t.Errorf("wait with nothing new: got %d frames, %v; want none", len(fs), err)
		}
		// A stop reaches the owner with its next write; another owner's write is lost.
		if err := b.Stop(ctx, "c1", "r1"); err != nil {
			t.Fatal(err)
		}
		w.Frames = nil
		if v, err := a.Append(ctx, w); err != nil || !v.Stop {
			t.Errorf("append after stop: got %+v %v, want Stop", v, err)
		}
		w2 := w
		w2.Owner = "B"
		if v, _ := b.Append(ctx, w2); !v.Lost {
			t.Errorf("append by another owner: got %+v, want Lost", v)
		}
		// The lease lapses: the reap ends the run once.
		time.Sleep(lease + 50*time.Millisecond)
		if meta, _ = b.Lookup(ctx, "c1"); !meta.Lapsed {
			t.Fatalf("got %+v, want the lease lapsed", meta)
		}
		end := runs.Write{Chat: "c1", Run: "r1", Frames: frames(13, 14), Done: true, TTL: ttl, MaxFrames: 8}
		if ok, err := b.Reap(ctx, end, 11); ok || err != nil {
			t.Errorf("reap with a stale seq: got %v %v, want false", ok, err)
		}
		if ok, err := b.Reap(ctx, end, 12); !ok || err != nil {
			t.Errorf("reap: got %v %v, want true", ok, err)
		}
		if ok, _ := a.Reap(ctx, end, 12); ok {
			t.Errorf("second reap: got true, want false")
		}
		if v, _ := a.Append(ctx, w); !v.Lost {
			t.Errorf("append after the reap: got %+v, want Lost", v)
		}
		meta, _ = a.Lookup(ctx, "c1")
		if !meta.Done || meta.Lapsed || meta.Seq != 14 {
			t.Errorf("got %+v, want done at 14", meta)
		}
		if r, err := srv.Do("PTTL", "sluice:{chat:c1}:r1"); err != nil || len(r) < 3 || r[0] != ':' || r[1] == '-' {
			t.Errorf("got the frames' PTTL %q %v, want a TTL", r, err)
		}
		// A finished chat may be claimed by another key.
		if err := b.Claim(ctx, other, "B", lease, ttl); err != nil {
			t.Errorf("claim of a finished chat: got %v", err)
		}
		if meta, err := a.Lookup(ctx, "nope"); meta != nil || err != nil {
			t.Errorf("lookup of an unknown chat: got %+v %v, want nil", meta, err)
		}
	})
}

func first(fs []runs.Frame) int64 {
	if len(fs) == 0 {
		return 0
	}
	return fs[0].Seq
}
