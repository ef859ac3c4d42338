package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/tools/mcp/mcptest"
	"github.com/sluice-gw/sluice/internal/uistream"
)

func TestMain(m *testing.M) {
	mcptest.Main() // the test binary as a local MCP server (mcpfilter_test.go)
	goleak.VerifyTestMain(m)
}

// memNet is a listener whose connections are in-memory pipes (net.Pipe): a real HTTP server
// and client with no socket, so that tests can run inside a synctest bubble.
type memNet struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

type memAddr struct{}

func (memAddr) Network() string { return "mem" }
func (memAddr) String() string  { return "mem" }

func (l *memNet) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *memNet) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *memNet) Addr() net.Addr { return memAddr{} }

func (l *memNet) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, srv := net.Pipe()
	select {
	case l.conns <- srv:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// serve runs h on an in-memory network until the test ends and returns a client of it (any
// host name reaches h).
func serve(t *testing.T, h http.Handler) *http.Client {
	l := &memNet{conns: make(chan net.Conn), done: make(chan struct{})}
	// The body is read first, as any tool does: only then does the server notice a client
	// that left (and cancel the handler's context).
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		h.ServeHTTP(w, r)
	})}
	go srv.Serve(l)
	tr := &http.Transport{DialContext: l.dial}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
	})
	return &http.Client{Transport: tr}
}

// record records what an encoder writes, as decoded chunks (nil for [DONE]).
type record struct {
	mu     sync.Mutex
	chunks []map[string]any
}

func (f *record) out(_ int64, b []byte) {
	s := string(b)
	data := strings.TrimSuffix(s[strings.Index(s, "data: ")+6:], "\n\n")
	var c map[string]any
	if data != "[DONE]" {
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			panic(err)
		}
	}
	f.mu.Lock()
	f.chunks = append(f.chunks, c)
	f.mu.Unlock()
}

func (f *record) of(typ string) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, c := range f.chunks {
		if c != nil && c["type"] == typ {
			out = append(out, c)
		}
	}
	return out
}

func (f *record) types() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ts []string
	for _, c := range f.chunks {
		if c == nil {
			ts = append(ts, "DONE")
		} else {
			ts = append(ts, c["type"].(string))
		}
	}
	return strings.Join(ts, ",")
}

func newEncoder() (*uistream.Encoder, *record) {
	f := &record{}
	return uistream.NewEncoder(uistream.V7, "run_t", 0, f.out), f
}

// runCalls offers names of set and runs calls as a round would, returning what was written
// and what the model is sent back.
func runCalls(ctx context.Context, set *Set, names []string, calls ...llm.ToolCall) (*record, []llm.Message, error) {
	enc, f := newEncoder()
	o := set.Offer(ctx, names, false)
	msgs, err := o.Run(ctx, calls, enc)
	return f, msgs, err
}

func toolCall(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: args}
}

// text is the text of a tool message.
func text(m llm.Message) string { return m.Parts[0].Text }

type llmCall = llm.ToolCall

// runCallsOn runs calls with an offer already made.
func runCallsOn(ctx context.Context, o *Offer, calls ...llm.ToolCall) (*record, []llm.Message, error) {
	enc, f := newEncoder()
	msgs, err := o.Run(ctx, calls, enc)
	return f, msgs, err
}
