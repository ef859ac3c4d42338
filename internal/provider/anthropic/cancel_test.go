package anthropic

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// hold serves the start of an answer, then holds the stream open until the client goes,
// and reports that it saw its context end.
func hold(gone chan<- struct{}) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, msgStart+textStart+textDelta)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	}
}

func waitGone(t *testing.T, gone <-chan struct{}) {
	t.Helper()
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream handler did not see its context end")
	}
}

func TestClientCancel(t *testing.T) {
	gone := make(chan struct{})
	u := newUpstream(t, hold(gone))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := u.client(Config{}).Stream(ctx, testRequest())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 2 { // start, text
		if _, err := s.Recv(); err != nil {
			t.Fatalf("got %v, want an event", err)
		}
	}
	time.AfterFunc(20*time.Millisecond, cancel) // cancel while Recv blocks
	_, err = s.Recv()
	wantKind(t, err, llm.Canceled)
	waitGone(t, gone)
}

func TestDeadline(t *testing.T) {
	gone := make(chan struct{})
	u := newUpstream(t, hold(gone))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	s, err := u.client(Config{}).Stream(ctx, testRequest())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, end := providertest.Drain(t, s)
	wantKind(t, end, llm.Timeout)
	waitGone(t, gone)
}

func TestCancelCause(t *testing.T) {
	// The chain cancels with a cause to tell a first-event timeout from a client that left.
	gone := make(chan struct{})
	u := newUpstream(t, hold(gone))
	ctx, cancel := context.WithCancelCause(context.Background())
	s, err := u.client(Config{}).Stream(ctx, testRequest())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cancel(llm.Errorf(llm.Timeout, "no first event within 1s"))
	_, end := providertest.Drain(t, s)
	wantKind(t, end, llm.Timeout)
	waitGone(t, gone)
}

func TestCanceledBeforeCall(t *testing.T) {
	u := newUpstream(t, providertest.SSE(msgStart))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := u.client(Config{}).Stream(ctx, testRequest())
	wantKind(t, err, llm.Canceled)
}

func TestCloseUnblocksRecv(t *testing.T) {
	gone := make(chan struct{})
	u := newUpstream(t, hold(gone))
	s := openStream(t, u.client(Config{}))
	for range 2 {
		if _, err := s.Recv(); err != nil {
			t.Fatalf("got %v, want an event", err)
		}
	}
	time.AfterFunc(20*time.Millisecond, func() { s.Close() })
	_, err := s.Recv()
	if llm.KindOf(err) != llm.Canceled {
		t.Errorf("got %v, want Canceled after Close", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: got %v, want nil", err)
	}
	waitGone(t, gone)
}
