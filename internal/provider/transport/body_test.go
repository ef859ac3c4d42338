package transport

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// rc is a body that records what was read of it and whether it was closed.
type rc struct {
	r      *strings.Reader
	read   int
	closed int
}

func (b *rc) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read += n
	return n, err
}

func (b *rc) Close() error { b.closed++; return nil }

func TestBodyEnd(t *testing.T) {
	// After a complete answer the rest (the closing chunk) is read, so the pool keeps the
	// connection, and the hook runs first: the server flushes before the drain.
	up := &rc{r: strings.NewReader("\r\n0\r\n\r\n")}
	b := NewBody(context.Background(), "up", up)
	waited := false
	b.OnWait(func() { waited = up.read == 0 })
	b.End(io.EOF)
	if up.read != 7 || up.closed != 1 || !waited {
		t.Errorf("complete: read %d, closed %d, hook before the drain %v; want 7, 1, true", up.read, up.closed, waited)
	}
	// A failure closes at once: nothing more is read.
	up = &rc{r: strings.NewReader("more")}
	b = NewBody(context.Background(), "up", up)
	b.End(&llm.Error{Kind: llm.Truncated})
	b.Close()
	if up.read != 0 || up.closed != 1 {
		t.Errorf("failure: read %d, closed %d; want 0 and once", up.read, up.closed)
	}
}

func TestBodyStopped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b := NewBody(ctx, "up", &rc{r: strings.NewReader("")})
	if err := b.Stopped(); err != nil {
		t.Fatalf("live: %v", err)
	}
	b.Close()
	if err := b.Stopped(); llm.KindOf(err) != llm.Canceled || !strings.HasPrefix(err.Error(), "up: ") {
		t.Errorf("closed: %v, want Canceled, named", err)
	}
	cancel()
	if err := b.Stopped(); llm.KindOf(err) != llm.Canceled || strings.HasPrefix(err.Error(), "up: ") {
		t.Errorf("client gone: %v, want the context's Canceled", err)
	}
}
