package openai

import (
	"io"
	"net/http"
	"net/http/httptrace"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// TestCompleteAnswerKeepsConnection checks that a complete answer leaves its connection to
// the next call: the stream reads the body's closing chunk, which an upstream may send a
// moment after [DONE], before it closes the body. Closing at [DONE] would cost every call a
// new connection (a TLS handshake upstream).
func TestCompleteAnswerKeepsConnection(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c1","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}`+"\n\n"+
			"data: [DONE]\n\n")
		http.NewResponseController(w).Flush()
		time.Sleep(20 * time.Millisecond) // the closing chunk comes late
	})
	c := u.client(Config{Name: "up"})
	var reused []bool
	for range 3 {
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = append(reused, i.Reused) }}
		s, err := c.Stream(httptrace.WithClientTrace(t.Context(), trace), &llm.Request{Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := drain(t, s); err != io.EOF {
			t.Fatal(err)
		}
		s.Close()
	}
	if len(reused) != 3 || reused[1] != true || reused[2] != true {
		t.Errorf("connection reused per call: %v, want [false true true]", reused)
	}
}
