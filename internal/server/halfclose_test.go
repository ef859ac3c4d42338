package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/mockllm"
)

// accessLog is a gateway's log that a test can wait on; safe for concurrent writers.
type accessLog struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed and replaced at each write
}

func newAccessLog() *accessLog { return &accessLog{changed: make(chan struct{})} }

func (l *accessLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	close(l.changed)
	l.changed = make(chan struct{})
	return l.b.Write(p)
}

// line waits for the access line of request id and returns it.
func (l *accessLog) line(t *testing.T, id string) string {
	t.Helper()
	// A safety net against a hang, not a timing assertion.
	safety := time.After(30 * time.Second)
	for {
		l.mu.Lock()
		for _, line := range strings.Split(l.b.String(), "\n") {
			if strings.Contains(line, "msg=request id="+id+" ") {
				l.mu.Unlock()
				return line
			}
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-safety:
			t.Fatalf("no access line for request %s", id)
		}
	}
}

// halfCloseGateway is a gateway served as the binary serves it (server.ConnContext), in
// front of a mock upstream, with its log.
func halfCloseGateway(t *testing.T) (addr string, mock *mockllm.Server, log *accessLog) {
	t.Helper()
	mock = mockllm.New(mockllm.Options{})
	ms := httptest.NewServer(mock)
	log = newAccessLog()
	gs := listen(buildConfig(t, baseConfig, map[string]string{"MOCK_URL": ms.URL}, log))
	t.Cleanup(func() {
		gs.Close()
		ms.Close()
	})
	return strings.TrimPrefix(gs.URL, "http://"), mock, log
}

// sendRaw writes a whole chat request on a new connection, with request id id.
func sendRaw(t *testing.T, addr, id, body string) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Request-Id: %s\r\nContent-Type: application/json\r\n"+
		"Content-Length: %d\r\n\r\n%s", id, len(body), body)
	return c.(*net.TCPConn)
}

// A complete request followed by a half-close (shutdown(SHUT_WR), as nc -N does) is served
// in full, streamed or not, and the access line says what the wire says. Before the answer
// the gateway may send one interim 100 Continue: its probe of the connection.
func TestHalfCloseIsServed(t *testing.T) {
	addr, _, log := halfCloseGateway(t)
	const model = "mock/text?len=400&chunk=40&delay=20ms" // answered over 200ms: the EOF comes first
	for _, stream := range []bool{false, true} {
		name := map[bool]string{false: "non-streamed", true: "streamed"}[stream]
		t.Run(name, func(t *testing.T) {
			id := "half-close-" + name
			c := sendRaw(t, addr, id, chatBody(model, stream, ""))
			if err := c.CloseWrite(); err != nil {
				t.Fatal(err)
			}
			c.SetReadDeadline(time.Now().Add(30 * time.Second)) // a safety net, not a timing assertion
			wire, err := io.ReadAll(c)                          // to the gateway's close
			if err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(bytes.NewReader(wire))
			var resp *http.Response
			for interim := 0; ; interim++ {
				if resp, err = http.ReadResponse(br, nil); err != nil {
					t.Fatalf("got %v reading %q, want a response", err, wire)
				}
				if resp.StatusCode != http.StatusContinue || interim > 0 {
					break
				}
			}
			body, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("got %d %q (%v), want 200 and the whole answer", resp.StatusCode, body, err)
			}
			if stream {
				f := frames(t, bytes.NewReader(body))
				if len(f) < 10 || f[len(f)-1] != "[DONE]" {
					t.Errorf("got %d frames ending %q, want the whole stream and [DONE]", len(f), f[max(len(f)-1, 0):])
				}
			} else {
				var cc struct {
					Choices []struct {
						Message      struct{ Content string }
						FinishReason string `json:"finish_reason"`
					}
				}
				if json.Unmarshal(body, &cc) != nil || len(cc.Choices) != 1 || len(cc.Choices[0].Message.Content) != 400 ||
					cc.Choices[0].FinishReason != "stop" {
					t.Errorf("got %s, want the whole answer", body)
				}
			}
			if line := log.line(t, id); !strings.Contains(line, " status=200 ") || !strings.Contains(line, " kind=none ") {
				t.Errorf("got access line %s, want status=200 kind=none, as on the wire", line)
			}
		})
	}
}

// A half-close after the answer started changes nothing on the wire: the stream goes on to
// [DONE], and no probe lands inside it.
func TestHalfCloseMidStream(t *testing.T) {
	addr, _, log := halfCloseGateway(t)
	c := sendRaw(t, addr, "mid-stream", chatBody("mock/text?len=400&chunk=40&delay=20ms", true, ""))
	c.SetReadDeadline(time.Now().Add(30 * time.Second)) // a safety net, not a timing assertion
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("got %v %v, want a 200 stream", resp, err)
	}
	first := make([]byte, 1)
	if _, err := io.ReadFull(resp.Body, first); err != nil { // the answer has begun
		t.Fatal(err)
	}
	if err := c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("got %v after %q, want the rest of the stream", err, rest)
	}
	f := frames(t, bytes.NewReader(append(first, rest...)))
	if len(f) < 10 || f[len(f)-1] != "[DONE]" || bytes.Contains(rest, []byte("100 Continue")) {
		t.Errorf("got %d frames ending %q, want the whole stream, [DONE] and no probe", len(f), f[max(len(f)-1, 0):])
	}
	if line := log.line(t, "mid-stream"); !strings.Contains(line, " status=200 ") || !strings.Contains(line, " kind=none ") {
		t.Errorf("got access line %s, want status=200 kind=none", line)
	}
}

// A client that closes its connection (not a half-close) before the answer has left: the
// upstream call is canceled, the access line says 499, and no status line is written.
func TestClientCloseCancelsUpstream(t *testing.T) {
	addr, mock, log := halfCloseGateway(t)
	for _, stream := range []bool{false, true} {
		name := map[bool]string{false: "non-streamed", true: "streamed"}[stream]
		t.Run(name, func(t *testing.T) {
			before := mock.Canceled()
			id := "close-" + name
			// Nothing reaches the client for a minute: only its departure ends the call.
			c := sendRaw(t, addr, id, chatBody("mock/text?first=1m", stream, ""))
			c.Close()
			if line := log.line(t, id); !strings.Contains(line, " status=499 ") || !strings.Contains(line, " kind=canceled ") {
				t.Errorf("got access line %s, want status=499 kind=canceled", line)
			}
			deadline := time.Now().Add(10 * time.Second)
			for mock.Canceled() == before {
				if time.Now().After(deadline) {
					t.Fatal("the upstream request was not canceled after the client left")
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}

// Served without server.ConnContext (the handler embedded in another server), a half-close
// counts as a departure, as in net/http; then the wire carries no answer at all, where
// net/http alone wrote an empty 200 that the log (499) contradicted.
func TestHalfCloseWithoutConnContext(t *testing.T) {
	mock := mockllm.New(mockllm.Options{})
	ms := httptest.NewServer(mock)
	log := newAccessLog()
	gs := httptest.NewServer(buildConfig(t, baseConfig, map[string]string{"MOCK_URL": ms.URL}, log))
	t.Cleanup(func() {
		gs.Close()
		ms.Close()
	})
	c := sendRaw(t, strings.TrimPrefix(gs.URL, "http://"), "plain", chatBody("mock/text?first=1m", false, ""))
	if err := c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Second)) // a safety net, not a timing assertion
	wire, err := io.ReadAll(c)
	if err != nil || len(wire) != 0 {
		t.Errorf("got %q (%v), want the connection closed without an answer", wire, err)
	}
	if line := log.line(t, "plain"); !strings.Contains(line, " status=499 ") {
		t.Errorf("got access line %s, want status=499", line)
	}
}
