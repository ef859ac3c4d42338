package sse_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sluice-gw/sluice/internal/sse"
)

// A keepalive that comes before commit sends the headers, declaring the options' trailers;
// Start then sets them as trailers, sent after the body.
func TestWriterKeepaliveDeclaresTrailers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := httptest.NewRecorder()
		rec.Header().Set("X-Target", "stale")
		ew := sse.NewWriter(rec, sse.WriterOptions{Heartbeat: 10 * time.Second, Trailers: []string{"X-Target", "X-Attempts"}})
		time.Sleep(25 * time.Second)
		synctest.Wait()
		if err := ew.Start(func(h http.Header) { h.Set("X-Target", "a/b"); h.Set("X-Attempts", "2") }); err != nil {
			t.Fatal(err)
		}
		if err := ew.Frame([]byte("data: x\n\n")); err != nil {
			t.Fatal(err)
		}
		ew.Close()
		res := rec.Result()
		if got, want := rec.Body.String(), ": keepalive\n\n: keepalive\n\ndata: x\n\n"; got != want {
			t.Errorf("got body %q, want %q", got, want)
		}
		if res.Header.Get("Trailer") != "X-Target, X-Attempts" || res.Header.Get("X-Target") != "" ||
			res.Header.Get("Content-Type") != "text/event-stream" {
			t.Errorf("got headers %v, want SSE headers with the trailers declared and no stale target", res.Header)
		}
		if res.Trailer.Get("X-Target") != "a/b" || res.Trailer.Get("X-Attempts") != "2" {
			t.Errorf("got trailers %v, want the target and attempts", res.Trailer)
		}
	})
}

// With no keepalive before commit, Start sends the headers themselves, and no trailer.
func TestWriterStartSendsHeaders(t *testing.T) {
	rec := httptest.NewRecorder()
	ew := sse.NewWriter(rec, sse.WriterOptions{Trailers: []string{"X-Target"}})
	if err := ew.Start(func(h http.Header) { h.Set("X-Target", "a/b") }); err != nil {
		t.Fatal(err)
	}
	ew.Close()
	res := rec.Result()
	if res.Header.Get("X-Target") != "a/b" || res.Header.Get("Trailer") != "" || !ew.Begun() {
		t.Errorf("got headers %v, want the target as a header", res.Header)
	}
}

// flushes counts the flushes that reach the client.
type flushes struct {
	*httptest.ResponseRecorder
	n int
}

func (f *flushes) Flush() { f.n++; f.ResponseRecorder.Flush() }

// In batch mode frames leave on Release (and Close), not one by one.
func TestWriterBatching(t *testing.T) {
	f := &flushes{ResponseRecorder: httptest.NewRecorder()}
	ew := sse.NewWriter(f, sse.WriterOptions{})
	ew.Batching()
	_ = ew.Start(func(http.Header) {})
	_ = ew.Frame([]byte("data: 1\n\n"))
	_ = ew.Frame([]byte("data: 2\n\n"))
	if f.n != 0 {
		t.Fatalf("flushed %d times before Release, want 0", f.n)
	}
	ew.Release()
	ew.Release() // nothing new: no flush
	_ = ew.Frame([]byte("data: 3\n\n"))
	ew.Close()
	if f.n != 2 || f.Body.String() != "data: 1\n\ndata: 2\n\ndata: 3\n\n" {
		t.Errorf("got %d flushes of %q, want 2", f.n, f.Body.String())
	}
}

// Quiet before the headers left stops the heartbeat for good, so a plain HTTP answer follows.
func TestWriterQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := httptest.NewRecorder()
		ew := sse.NewWriter(rec, sse.WriterOptions{Heartbeat: time.Second})
		if ew.Quiet() {
			t.Fatal("Quiet reported begun headers")
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		ew.Close()
		if rec.Body.Len() != 0 || ew.Begun() {
			t.Errorf("got %q after Quiet, want nothing written", rec.Body.String())
		}
	})
}

// discard is a ResponseWriter that drops what it is sent and can flush.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) Flush()                      {}

// One frame written and flushed, with the heartbeat armed and a write deadline, as a
// relayed stream does per event.
func BenchmarkWriterFrame(b *testing.B) {
	ew := sse.NewWriter(&discard{h: http.Header{}}, sse.WriterOptions{Heartbeat: time.Minute, WriteTimeout: time.Minute})
	defer ew.Close()
	_ = ew.Start(func(http.Header) {})
	frame := []byte("data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n")
	b.ReportAllocs()
	for b.Loop() {
		if err := ew.Frame(frame); err != nil {
			b.Fatal(err)
		}
	}
}

// A wire whose clients want their own keepalive event (Anthropic's ping) gets it instead of
// the comment.
func TestWriterKeepaliveFrame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := httptest.NewRecorder()
		ping := []byte("event: ping\ndata: {\"type\":\"ping\"}\n\n")
		ew := sse.NewWriter(rec, sse.WriterOptions{Heartbeat: 10 * time.Second, Keepalive: ping})
		time.Sleep(15 * time.Second)
		synctest.Wait()
		ew.Close()
		if got := rec.Body.String(); got != string(ping) {
			t.Errorf("got body %q, want one ping event", got)
		}
	})
}
