package runs

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// Two replicas on one store: a run started on A replays on B byte for byte, in full or after
// any frame, while it runs and after its end.
func TestResumeOnOtherReplica(t *testing.T) {
	store := NewMemory()
	a, b := manager(t, store, Options{FlushInterval: 5 * time.Millisecond}), manager(t, store, Options{})
	run, rd, err := a.Start(context.Background(), spec("c1", chain(t, "text?len=300&chunk=5&delay=2ms"), false))
	if err != nil {
		t.Fatal(err)
	}
	// B joins mid-run with a full replay.
	ctx := context.Background()
	first, _ := rd.Next(ctx)
	live, err := b.Open(ctx, "c1", "k1", "")
	if err != nil {
		t.Fatal(err)
	}
	orig, err := drain(t, rd)
	if err != nil {
		t.Fatal(err)
	}
	orig = append([]string{string(first)}, orig...)
	replayed, err := drain(t, live)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(replayed, "") != strings.Join(orig, "") {
		t.Errorf("got on B:\n%s\nwant A's frames:\n%s", strings.Join(replayed, ""), strings.Join(orig, ""))
	}
	waitDone(t, store, "c1")
	// After the end: a plain resume is 204, one after a frame gets the rest.
	if _, err := b.Open(ctx, "c1", "k1", ""); !errors.Is(err, ErrNoRun) {
		t.Errorf("plain resume of a finished run: got %v, want ErrNoRun", err)
	}
	rest, err := b.Open(ctx, "c1", "k1", run.ID()+"-10")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := drain(t, rest)
	if strings.Join(got, "") != strings.Join(orig[10:], "") {
		t.Errorf("got after frame 10:\n%s\nwant:\n%s", strings.Join(got, ""), strings.Join(orig[10:], ""))
	}
	if _, err := b.Open(ctx, "c1", "k1", run.ID()+"-"+itoa(len(orig))); !errors.Is(err, ErrNoRun) {
		t.Errorf("resume after the last frame: got %v, want ErrNoRun", err)
	}
}

func itoa(n int) string {
	b := []byte{}
	for ; n > 0 || len(b) == 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func waitDone(t *testing.T, s Store, chat string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if m, _ := s.Lookup(context.Background(), chat); m != nil && m.Done {
			return
		}
	}
	t.Fatalf("the run of %s did not end in the store", chat)
}

// A stop asked on B reaches the run on A, which ends with abort.
func TestStopFromOtherReplica(t *testing.T) {
	store := NewMemory()
	a, b := manager(t, store, Options{FlushInterval: 5 * time.Millisecond, Lease: 300 * time.Millisecond}), manager(t, store, Options{})
	_, rd, err := a.Start(context.Background(), spec("c1", chain(t, "text?len=100&fail=stall&after=2"), false))
	if err != nil {
		t.Fatal(err)
	}
	// The upstream stalls after its two chunks: the stop is asked once both were read, so
	// what the run sent before it does not depend on when the stop reaches it.
	var seen []string
	for deltas := 0; deltas < 2; {
		f, err := rd.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, string(f))
		if c := chunk(t, string(f)); c != nil && c["type"] == "text-delta" {
			deltas++
		}
	}
	if _, err := b.Stop(context.Background(), "c1", "k1"); err != nil {
		t.Fatal(err)
	}
	frames, _ := drain(t, rd)
	if got := squeeze(types(t, append(seen, frames...))); !strings.HasSuffix(got, "text-delta+,abort,DONE") {
		t.Errorf("got %s, want the run to end with abort", got)
	}
	waitDone(t, store, "c1")
	if _, err := b.Stop(context.Background(), "c1", "k1"); !errors.Is(err, ErrNoRun) {
		t.Errorf("stop of a finished run: got %v, want ErrNoRun", err)
	}
}

// A replica that dies mid-run leaves its lease to lapse: B's readers then get an error end,
// written once, that a later resume replays.
func TestLeaseLoss(t *testing.T) {
	store := NewMemory()
	lease := 300 * time.Millisecond
	a, b := manager(t, store, Options{FlushInterval: 5 * time.Millisecond, Lease: lease}), manager(t, store, Options{Lease: lease})
	run, rd, err := a.Start(context.Background(), spec("c1", chain(t, "text?len=100&fail=stall&after=2"), false))
	if err != nil {
		t.Fatal(err)
	}
	rd.Close()
	readers := make([]*Reader, 2)
	for i := range readers {
		if readers[i], err = b.Open(context.Background(), "c1", "k1", ""); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	a.Crash()
	for i, r := range readers {
		frames, err := drain(t, r)
		if err != nil {
			t.Fatal(err)
		}
		if got := squeeze(types(t, frames)); !strings.HasSuffix(got, "text-delta+,error,finish,DONE") {
			t.Errorf("reader %d: got %s, want the error end", i, got)
		}
	}
	if d := time.Since(start); d < lease/2 {
		t.Errorf("got the error end after %v, want it after the lease lapsed", d)
	}
	later, err := b.Open(context.Background(), "c1", "k1", run.ID()+"-1")
	if err != nil {
		t.Fatal(err)
	}
	frames, _ := drain(t, later)
	if got := strings.Count(strings.Join(frames, ""), `"type":"error"`); got != 1 {
		t.Errorf("got %d error frames on a later resume, want 1", got)
	}
}

// A reader that does not read is ended once it falls MaxLag behind; the run and a reader
// that keeps up go on unhindered.
func TestSlowReader(t *testing.T) {
	m := manager(t, NewMemory(), Options{Window: 16, MaxLag: 32, FlushInterval: time.Millisecond})
	run, fast, err := m.Start(context.Background(), spec("c1", chain(t, "text?len=400&chunk=4&delay=1ms"), false))
	if err != nil {
		t.Fatal(err)
	}
	slow, err := m.Open(context.Background(), "c1", "k1", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := slow.Next(context.Background()); err != nil { // it reads live, then stops reading
		t.Fatal(err)
	}
	frames, err := drain(t, fast)
	if err != nil || !strings.HasSuffix(types(t, frames), "finish,DONE") {
		t.Fatalf("fast reader: got %v, want the whole run", err)
	}
	n := 1
	for ; ; n++ {
		if _, err = slow.Next(context.Background()); err != nil {
			break
		}
	}
	slow.Close()
	if !errors.Is(err, ErrBehind) || n >= len(frames) {
		t.Errorf("slow reader: got %v after %d of %d frames, want ErrBehind", err, n, len(frames))
	}
	// It resumes where it stopped, from the store.
	rest, err := m.Open(context.Background(), "c1", "k1", run.ID()+"-"+itoa(n))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := drain(t, rest)
	if n+len(got) != len(frames) {
		t.Errorf("got %d + %d frames, want %d", n, len(got), len(frames))
	}
}

// Beyond the length cap, resuming from a trimmed frame is an explicit error, never a partial
// replay.
func TestLengthCap(t *testing.T) {
	store := NewMemory()
	m := manager(t, store, Options{MaxFrames: 10, Window: 4, FlushInterval: time.Millisecond})
	run, rd, err := m.Start(context.Background(), spec("c1", chain(t, "text?len=200&chunk=5&delay=1ms"), false))
	if err != nil {
		t.Fatal(err)
	}
	frames, err := drain(t, rd)
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) < 20 {
		t.Fatalf("got %d frames, want more than the cap", len(frames))
	}
	waitDone(t, store, "c1")
	if _, err := m.Open(context.Background(), "c1", "k1", run.ID()+"-2"); !errors.Is(err, ErrTrimmed) {
		t.Errorf("resume from a trimmed frame: got %v, want ErrTrimmed", err)
	}
	rest, err := m.Open(context.Background(), "c1", "k1", run.ID()+"-"+itoa(len(frames)-5))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := drain(t, rest); strings.Join(got, "") != strings.Join(frames[len(frames)-5:], "") {
		t.Errorf("resume within the cap: got %d frames, want the last 5", len(got))
	}
}
