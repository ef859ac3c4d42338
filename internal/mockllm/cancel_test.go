package mockllm

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestCancel leaves in the middle of each kind of wait and checks the handler noticed.
func TestCancel(t *testing.T) {
	tests := []struct {
		name   string
		model  string
		stream bool
		events int // events to read before leaving
	}{
		{"stall before first event", "text?role=0&fail=stall", true, 0},
		{"stall after role chunk", "text?fail=stall", true, 1},
		{"stall after chunks", "text?len=30&chunk=10&fail=stall&after=2", true, 3},
		{"first delay", "text?first=1h", true, 1},
		{"chunk delay", "text?len=20&chunk=5&delay=1h", true, 2},
		{"non-stream stall", "text?fail=stall", false, 0},
	}
	for _, m := range modes {
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				s := newTestServer()
				c, base, stop := m.start(t, s)
				ctx, cancel := context.WithCancel(t.Context())
				resp, err := post(ctx, c, base, chatBody(tt.model, "x", tt.stream, false))
				if err != nil {
					t.Fatal(err)
				}
				want(t, "status", resp.StatusCode, 200)
				br := bufio.NewReader(resp.Body)
				for range tt.events {
					if _, err := readEvent(br); err != nil {
						t.Fatalf("reading event: %v", err)
					}
				}
				cancel()
				_, err = io.ReadAll(br)
				if !errors.Is(err, context.Canceled) {
					t.Errorf("read after cancel: got %v, want context.Canceled", err)
				}
				resp.Body.Close()
				stop() // httptest.Server.Close waits for handlers
				want(t, "canceled", s.Canceled(), 1)
			})
		}
	}
}

func readEvent(br *bufio.Reader) (string, error) {
	var b strings.Builder
	for {
		line, err := br.ReadString('\n')
		b.WriteString(line)
		if err != nil {
			return b.String(), err
		}
		if line == "\n" {
			return b.String(), nil
		}
	}
}

func TestFinishedNotCanceled(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			s := newTestServer()
			c, base, stop := m.start(t, s)
			for _, model := range []string{"text?delay=1ms", "text?fail=500", "text?fail=cut", "nope"} {
				resp, err := post(t.Context(), c, base, chatBody(model, "x", true, false))
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			stop()
			want(t, "canceled", s.Canceled(), 0)
		})
	}
}

func TestAbort(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			s := newTestServer()
			c, base, _ := m.start(t, s)
			resp, err := post(t.Context(), c, base, chatBody("text?len=20&chunk=10&fail=abort&after=1", "x", true, false))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, err := io.ReadAll(resp.Body)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("read: got %v, want io.ErrUnexpectedEOF", err)
			}
			want(t, "deltas before the cut", parseStream(t, got).deltas, 1)
		})
	}
}

// TestTransportReturnsAtHeaders checks RoundTrip returns before the handler has written any
// body, and that closing the body ends the handler and leaves no goroutine.
func TestTransportReturnsAtHeaders(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := newTestServer()
	c := &http.Client{Transport: s.Transport()}
	resp, err := post(t.Context(), c, "http://x/v1", chatBody("text?role=0&first=1h", "x", true, false))
	if err != nil {
		t.Fatal(err)
	}
	want(t, "status", resp.StatusCode, 200)
	want(t, "content type", resp.Header.Get("Content-Type"), "text/event-stream")
	resp.Body.Close()
	want(t, "canceled", s.Canceled(), 1)
}

// TestTransportCancelBeforeHeaders checks a client that leaves during wait= gets its
// context's error from RoundTrip, and the handler is gone when it returns.
func TestTransportCancelBeforeHeaders(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := newTestServer()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://x/v1/chat/completions",
		strings.NewReader(string(chatBody("text?wait=1h", "x", true, false))))
	resp, err := s.Transport().RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("RoundTrip: got a response, want an error")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("RoundTrip: got %v, want context.DeadlineExceeded", err)
	}
	want(t, "canceled", s.Canceled(), 1)
}

func TestTransportNoLeak(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := newTestServer()
	c := &http.Client{Transport: s.Transport()}
	for _, model := range []string{"text?len=500&chunk=3", "text?fail=stall", "replay?file=openai-chat-text.sse", "nope"} {
		resp, err := post(t.Context(), c, "http://x/v1", chatBody(model, "x", true, true))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Read(make([]byte, 10)) // leave early
		resp.Body.Close()
	}
}

// BenchmarkTransport measures one streamed 1 KiB answer in-process.
func BenchmarkTransport(b *testing.B) {
	s := newTestServer()
	c := &http.Client{Transport: s.Transport()}
	body := chatBody("text?len=1024&chunk=16", "x", true, true)
	for b.Loop() {
		resp, err := post(context.Background(), c, "http://x/v1", body)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
