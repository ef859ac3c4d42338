package openai

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
	"github.com/sluice-gw/sluice/internal/provider/transport"
)

// TestCompleteAnswerKeepsConnection checks that a complete answer leaves its connection to
// the next call: the stream reads the body's closing chunk, which an upstream may send a
// moment after [DONE], before it closes the body. Closing at [DONE] would cost every call a
// new connection (a TLS handshake upstream).
func TestCompleteAnswerKeepsConnection(t *testing.T) {
	// The drain's bound is generous here: under load, the upstream's 20 ms pause could
	// outlast the production bound (100 ms) and the test would measure the scheduler.
	defer func(w time.Duration) { transport.DrainWait = w }(transport.DrainWait)
	transport.DrainWait = time.Minute
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
		if _, err := providertest.Drain(t, s); err != io.EOF {
			t.Fatal(err)
		}
		s.Close()
	}
	if len(reused) != 3 || reused[1] != true || reused[2] != true {
		t.Errorf("connection reused per call: %v, want [false true true]", reused)
	}
}

// writeCounter is a connection that counts its writes.
type writeCounter struct {
	net.Conn
	n *atomic.Int32
}

func (c writeCounter) Write(b []byte) (int, error) {
	c.n.Add(1)
	return c.Conn.Write(b)
}

// TestRequestIsOneWrite checks that a call leaves in one write, headers and body together:
// as openai-go hands it over, net/http would write the headers on their own first, and the
// upstream would read (and wake) twice for every call.
func TestRequestIsOneWrite(t *testing.T) {
	u := newUpstream(t, providertest.SSE(`data: {"id":"c1","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}`+"\n\n"+
		"data: [DONE]\n\n"))
	var writes atomic.Int32
	var d net.Dialer
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return writeCounter{Conn: c, n: &writes}, nil
	}}}
	defer hc.CloseIdleConnections()
	c := u.client(Config{Name: "up"})
	c.conn = newConn(Config{Name: "up", BaseURL: u.URL + "/v1", APIKey: testKey, HTTPClient: hc})
	for i := range 3 {
		writes.Store(0)
		s, err := c.Stream(t.Context(), &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: strings.Repeat("x", 100)}}, Plain: true}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := providertest.Drain(t, s); err != io.EOF {
			t.Fatal(err)
		}
		s.Close()
		if n := writes.Load(); n != 1 {
			t.Errorf("call %d: %d writes to the connection, want 1", i, n)
		}
	}
	if body, _, _ := u.Last(); !strings.Contains(string(body), strings.Repeat("x", 100)) {
		t.Errorf("upstream got %q", body)
	}
}
