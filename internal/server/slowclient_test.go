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
	gs := httptest.NewServer(srv)
	defer gs.Close()

	conn, err := net.Dial("tcp", strings.TrimPrefix(gs.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := chatBody("mock/text?len=16000000&chunk=65536&n=3", true, "")
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	// Never read. The gateway fills the socket buffers, its next write blocks, the deadline
	// cuts it, and the upstream call ends.
	deadline := time.Now().Add(20 * time.Second)
	for mock.Canceled() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the upstream request of a client that stopped reading was not canceled")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
