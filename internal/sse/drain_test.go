package sse

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"
)

// TestDrainReusesConnection checks the reason Drain exists: a body drained after its last
// event leaves its connection to the next request, where a body closed at once does not.
func TestDrainReusesConnection(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: [DONE]\n\n")
		http.NewResponseController(w).Flush() // chunked: the closing chunk comes after
		time.Sleep(20 * time.Millisecond)     // as late as a busy upstream sends it
	}))
	defer srv.Close()
	reused := func(end func(io.ReadCloser)) bool {
		t.Helper()
		c := &http.Client{Transport: &http.Transport{}}
		defer c.CloseIdleConnections()
		var got bool
		for i := range 2 {
			trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) { got = ci.Reused }}
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), "GET", srv.URL, nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := NewReader(resp.Body, 0).Next()
			if err != nil || string(ev.Data) != "[DONE]" {
				t.Fatalf("event %q, %v", ev.Data, err)
			}
			if i == 0 {
				end(resp.Body)
			} else {
				resp.Body.Close()
			}
		}
		return got
	}
	if !reused(func(b io.ReadCloser) { Drain(b, 4096, time.Second) }) {
		t.Error("drained body: the next request dialed a new connection")
	}
	if reused(func(b io.ReadCloser) { b.Close() }) {
		t.Error("a body closed before its closing chunk kept its connection: the test shows nothing")
	}
}

// TestDrainGivesUp checks that a body that never ends is closed after wait.
func TestDrainGivesUp(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write([]byte(strings.Repeat("x", 10)))
	Drain(pr, 1<<20, 20*time.Millisecond) // returns only because it gave up
	if _, err := pw.Write([]byte("y")); err != io.ErrClosedPipe {
		t.Errorf("write after drain: %v, want the pipe closed", err)
	}
}
