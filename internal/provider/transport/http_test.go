package transport

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// TestDialConnectTimeout: the dialer takes the attempt's connect timeout from its context.
func TestDialConnectTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := dial(context.Background(), "tcp", l.Addr().String())
	if err != nil {
		t.Fatalf("dial without a connect timeout: %v", err)
	}
	c.Close()
	// A timeout already spent fails the dial as a timeout, whatever the listener does.
	_, err = dial(llm.WithConnectTimeout(context.Background(), time.Nanosecond), "tcp", l.Addr().String())
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("dial with a spent connect timeout: %v, want a timeout", err)
	}
}

func TestError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	_, err = HTTPClient.Get("http://" + addr + "/v1?key=SECRET")
	e := Error(context.Background(), "up", err)
	if llm.KindOf(e) != llm.Unavailable || strings.Contains(e.Error(), "SECRET") || !strings.HasPrefix(e.Error(), "up: ") {
		t.Errorf("refused: %v, want Unavailable, named, without the URL's query", e)
	}
	if e := Error(context.Background(), "up", timeoutError{}); llm.KindOf(e) != llm.Timeout {
		t.Errorf("timeout: %v, want Timeout", e)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if e := Error(ctx, "up", timeoutError{}); llm.KindOf(e) != llm.Canceled {
		t.Errorf("client gone: %v, want Canceled whatever the transport saw", e)
	}
	HTTPClient.CloseIdleConnections()
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return false }
