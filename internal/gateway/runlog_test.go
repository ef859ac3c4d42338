package gateway

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/redisstore"
	"github.com/sluice-gw/sluice/internal/server"
)

// A failure to reach Redis is also server.ErrSharedDown, with the store's text, chain and
// kind; any other error passes as it is.
func TestSharedMarksOnlyRedisFailures(t *testing.T) {
	down := fmt.Errorf("%w: dial unix: connection refused", redisstore.ErrUnavailable)
	got := shared(down)
	if !errors.Is(got, server.ErrSharedDown) || !errors.Is(got, redisstore.ErrUnavailable) {
		t.Errorf("got %v: want it to be both server.ErrSharedDown and redisstore.ErrUnavailable", got)
	}
	if got.Error() != down.Error() || llm.KindOf(got) != llm.KindOf(down) {
		t.Errorf("got %q of kind %v, want the store's %q of kind %v", got, llm.KindOf(got), down, llm.KindOf(down))
	}
	other := errors.New("WRONGTYPE")
	if got := shared(other); got != other || errors.Is(got, server.ErrSharedDown) {
		t.Errorf("got %v for another error, want it unchanged", got)
	}
	if shared(nil) != nil {
		t.Error("got an error for nil")
	}
}
