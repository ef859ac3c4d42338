package reqbody

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// serve answers each request with what Read made of its body: "ok <body>", or the error's
// status and kind.
func serve(t *testing.T, max int64, timeout time.Duration) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := Read(w, r, max, timeout)
		if err != nil {
			w.WriteHeader(llm.HTTPStatus(err))
			fmt.Fprintf(w, "%v", llm.KindOf(err))
			return
		}
		fmt.Fprintf(w, "ok %s", b)
	}))
	t.Cleanup(hs.Close)
	return strings.TrimPrefix(hs.URL, "http://")
}

// raw sends req on a new connection and reads the answer.
func raw(t *testing.T, addr, req string) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, req)
	conn.SetReadDeadline(time.Now().Add(20 * time.Second)) // a hang fails the test, it does not time it
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestRead(t *testing.T) {
	addr := serve(t, 8, 100*time.Millisecond)
	for _, tc := range []struct {
		name, req string
		status    int
		body      string
	}{
		{"within the limits", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd", 200, "ok abcd"},
		{"announced too large", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\n123456789", 413, "too_large"},
		{"chunked, too large", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n9\r\n123456789\r\n0\r\n\r\n", 413, "too_large"},
		{"too slow", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\nab", 408, "invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := raw(t, addr, tc.req)
			if status != tc.status || body != tc.body {
				t.Errorf("got %d %q, want %d %q", status, body, tc.status, tc.body)
			}
		})
	}
}

// readAll reads what io.ReadAll reads, whatever the announced size says: exact, short,
// long, none, or larger than it allocates ahead.
func TestReadAll(t *testing.T) {
	big := strings.Repeat("x", presize*2+3)
	for _, c := range []struct {
		body string
		size int64
	}{{"hello", 5}, {"hello", 2}, {"hello", 50}, {"hello", -1}, {"", 0}, {big, int64(len(big))}, {big, 10}} {
		got, err := readAll(iotest.OneByteReader(strings.NewReader(c.body)), c.size)
		if err != nil || string(got) != c.body {
			t.Errorf("size %d: got %d bytes, %v; want %d bytes", c.size, len(got), err, len(c.body))
		}
		got, err = readAll(strings.NewReader(c.body), c.size)
		if err != nil || string(got) != c.body {
			t.Errorf("size %d, one read: got %d bytes, %v; want %d bytes", c.size, len(got), err, len(c.body))
		}
	}
	if _, err := readAll(iotest.ErrReader(io.ErrUnexpectedEOF), 5); err != io.ErrUnexpectedEOF {
		t.Errorf("a failing read: %v, want its error", err)
	}
}
