package llm

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestContextError(t *testing.T) {
	if err := ContextError(context.Background()); err != nil {
		t.Errorf("live ctx: %v, want nil", err)
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if k := KindOf(ContextError(gone)); k != Canceled {
		t.Errorf("client gone: %v, want Canceled", k)
	}
	late, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	if k := KindOf(ContextError(late)); k != Timeout {
		t.Errorf("deadline: %v, want Timeout", k)
	}
	idle := &Error{Kind: Timeout, Message: "idle timeout"}
	chained, cancelCause := context.WithCancelCause(context.Background())
	cancelCause(idle)
	if err := ContextError(chained); !errors.Is(err, idle) {
		t.Errorf("chain's cause: %v, want its own *Error", err)
	}
}

func TestConnectTimeout(t *testing.T) {
	if _, ok := ConnectTimeout(context.Background()); ok {
		t.Error("a bare context has a connect timeout")
	}
	ctx := context.WithoutCancel(WithConnectTimeout(context.Background(), 3*time.Second))
	if d, ok := ConnectTimeout(ctx); !ok || d != 3*time.Second {
		t.Errorf("got %v %v, want 3s through WithoutCancel", d, ok)
	}
}
