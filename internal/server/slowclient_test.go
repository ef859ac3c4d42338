package server_test

import (
	"fmt"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/provider/openai"
	"github.com/sluice-gw/sluice/internal/server"
)

// A client that sends a request and never reads is cut after the write timeout, and the
// upstream request is canceled: the gateway does not buffer an unbounded answer for it.
func TestSlowClientIsCut(t *testing.T) {
	mock := mockllm.New(mockllm.Options{})
	ms := httptest.NewServer(mock)
	defer ms.Close()
	srv := server.New(server.Options{
		Providers:    map[string]fallback.Provider{"mock": openai.New(openai.Config{Name: "mock", BaseURL: ms.URL + "/v1"})},
		WriteTimeout: 200 * time.Millisecond,
	})
	// Small socket buffers on both ends: the gateway's writes block after a few KiB, not
	// after the megabytes loopback autotuning allows, which a race-enabled gateway on a busy
	// machine took longer than the test's patience to produce.
	gs := httptest.NewUnstartedServer(srv)
	gs.Listener = smallBuffers{gs.Listener}
	gs.Start()
	defer gs.Close()

	conn, err := net.Dial("tcp", strings.TrimPrefix(gs.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.(*net.TCPConn).SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	body := chatBody("mock/text?len=4000000&chunk=16384", true, "")
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	// Never read. The gateway fills the socket buffers, its next write blocks, the deadline
	// cuts it, and the upstream call ends. The deadline only bounds a failing test.
	deadline := time.Now().Add(20 * time.Second)
	for mock.Canceled() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the upstream request of a client that stopped reading was not canceled")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// smallBuffers gives every accepted connection a small send buffer.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		if err := tc.SetWriteBuffer(4096); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, err
}
