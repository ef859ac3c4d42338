package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluice-gw/sluice/internal/tools/mcp/mcptest"
)

func TestMain(m *testing.M) {
	mcptest.Main() // the test binary as a local server (stdio_test.go)
	goleak.VerifyTestMain(m)
}

// count answers how many times it ran, with a progress notification per step.
func count(steps int) mcptest.Tool {
	return mcptest.Tool{Name: "count", Description: "counts", Run: func(ctx context.Context, _ json.RawMessage, progress func(float64, float64, string)) (string, bool) {
		for i := 1; i <= steps; i++ {
			progress(float64(i), float64(steps), "step")
		}
		return "counted", false
	}}
}

func start(t *testing.T, srv *mcptest.Server) *Client {
	t.Helper()
	hs := httptest.NewServer(srv)
	c := New(Config{URL: hs.URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer t"}})
	t.Cleanup(func() {
		c.Close()
		hs.Close()
	})
	return c
}

// events reads a call to its end: the progress values, then the result's text.
func events(t *testing.T, k *Call) ([]float64, string, error) {
	t.Helper()
	defer k.Close()
	var ps []float64
	for {
		ev, err := k.Recv()
		if err != nil {
			return ps, "", err
		}
		if ev.Progress != nil {
			ps = append(ps, ev.Progress.Progress)
			continue
		}
		text, _ := ev.Result.Text()
		return ps, text, nil
	}
}

func TestSessionAndCall(t *testing.T) {
	srv := mcptest.New(count(3))
	c := start(t, srv)
	tools, err := c.Tools(t.Context())
	if err != nil || len(tools) != 1 || tools[0].Name != "count" || string(tools[0].InputSchema) != `{"type":"object"}` {
		t.Fatalf("got %+v, %v; want the server's tool", tools, err)
	}
	k, err := c.Call(t.Context(), "count", json.RawMessage(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	ps, text, err := events(t, k)
	if err != nil || text != "counted" || len(ps) != 3 || ps[2] != 3 || !k.Streaming() {
		t.Errorf("got progress %v, result %q, err %v; want 3 steps and the result, streamed", ps, text, err)
	}
	if srv.Inits() != 1 || c.Changed() {
		t.Errorf("got %d sessions, changed %v; want one session kept, the list fresh", srv.Inits(), c.Changed())
	}
}

// A server that forgot the session (it restarted) answers 404, as the specification says, or
// 400 about the session, as server-everything and the MCP Python SDK do: the listing is asked
// again, and a tools/call sent again, once, in a new session. Each call runs once.
func TestExpiredSessionRetriedOnce(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusBadRequest} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			srv := mcptest.New(count(1))
			srv.ExpiredStatus = status
			c := start(t, srv)
			if _, err := c.Tools(t.Context()); err != nil {
				t.Fatal(err)
			}
			srv.Expire()
			if tools, err := c.Tools(t.Context()); err != nil || len(tools) != 1 {
				t.Fatalf("got %v, %v after the restart; want the list", tools, err)
			}
			srv.Expire()
			k, err := c.Call(t.Context(), "count", json.RawMessage(`{}`), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, text, err := events(t, k); err != nil || text != "counted" {
				t.Fatalf("got %q, %v; want the result", text, err)
			}
			if srv.Inits() != 3 || srv.Runs("count") != 1 {
				t.Errorf("got %d sessions and %d runs, want 3 and 1", srv.Inits(), srv.Runs("count"))
			}
		})
	}
}

// Only a refusal that names the session is a forgotten session: any other 400, or a 404 to a
// request without a session id, is the answer, and the call is not sent again.
func TestOther400NotRetried(t *testing.T) {
	srv := mcptest.New(count(1))
	var calls atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if bytes.Contains(b, []byte(`"tools/call"`)) {
			calls.Add(1)
			http.Error(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"Bad Request: invalid params"}}`, http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		srv.ServeHTTP(w, r)
	}))
	defer hs.Close()
	c := New(Config{URL: hs.URL})
	defer c.Close()
	_, err := c.Call(t.Context(), "count", json.RawMessage(`{}`), nil)
	if err == nil || errors.Is(err, ErrSessionExpired) || calls.Load() != 1 || srv.Inits() != 1 {
		t.Errorf("got %v, %d calls, %d sessions; want the 400, one call, one session", err, calls.Load(), srv.Inits())
	}
}

// A call whose answer is cut may have run: it is never sent again.
func TestCutCallNotRetried(t *testing.T) {
	srv := mcptest.New(mcptest.Tool{Name: "cut", Run: func(ctx context.Context, _ json.RawMessage, progress func(float64, float64, string)) (string, bool) {
		progress(1, 2, "half")
		panic(http.ErrAbortHandler) // the connection is cut mid-answer
	}})
	c := start(t, srv)
	k, err := c.Call(t.Context(), "cut", json.RawMessage(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	ps, _, err := events(t, k)
	if err == nil || len(ps) != 1 || srv.Runs("cut") != 1 {
		t.Errorf("got progress %v, err %v, %d runs; want the progress, an error, one run", ps, err, srv.Runs("cut"))
	}
}

// A call that timed out may have run: it is not sent again, even in a new session.
func TestTimedOutCallNotRetried(t *testing.T) {
	running := make(chan struct{})
	srv := mcptest.New(mcptest.Tool{Name: "slow", Run: func(ctx context.Context, _ json.RawMessage, progress func(float64, float64, string)) (string, bool) {
		close(running)
		<-ctx.Done()
		return "", true
	}})
	c := start(t, srv)
	ctx, cancel := context.WithCancelCause(t.Context())
	go func() {
		<-running
		cancel(context.DeadlineExceeded) // the tool's timeout, once it runs
	}()
	k, err := c.Call(ctx, "slow", json.RawMessage(`{}`), nil)
	if err == nil {
		_, _, err = events(t, k)
	}
	if err == nil || srv.Runs("slow") != 1 || srv.Inits() != 1 {
		t.Errorf("got %v, %d runs, %d sessions; want an error, one run, one session", err, srv.Runs("slow"), srv.Inits())
	}
}

// A call ended before its result is cancelled at the server.
func TestCancelled(t *testing.T) {
	srv := mcptest.New(mcptest.Tool{Name: "wait", Run: func(ctx context.Context, _ json.RawMessage, progress func(float64, float64, string)) (string, bool) {
		progress(1, 0, "waiting")
		<-ctx.Done()
		return "", true
	}})
	c := start(t, srv)
	ctx, cancel := context.WithCancel(t.Context())
	k, err := c.Call(ctx, "wait", json.RawMessage(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := k.Recv(); err != nil || ev.Progress == nil {
		t.Fatalf("got %+v, %v; want the progress", ev, err)
	}
	cancel()
	if _, err := k.Recv(); err == nil {
		t.Fatal("got no error after the cancel")
	}
	k.Close()
	if got := srv.Cancelled(); len(got) != 1 || got[0] != "2" { // initialize was request 1
		t.Errorf("got cancellations %v, want the call's id", got)
	}
}

// A tool list change the server sends on its GET stream marks the list stale.
func TestListChanged(t *testing.T) {
	srv := mcptest.New(count(1))
	c := start(t, srv)
	if _, err := c.Tools(t.Context()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !c.Changed() && time.Now().Before(deadline) {
		srv.SetTools(count(1), mcptest.Tool{Name: "more", Run: count(1).Run}) // until the GET stream is open
		time.Sleep(10 * time.Millisecond)
	}
	tools, err := c.Tools(t.Context())
	if err != nil || len(tools) != 2 || tools[1].Name != "more" {
		t.Errorf("got %+v, %v; want the new list", tools, err)
	}
}

func TestErrors(t *testing.T) {
	srv := mcptest.New(count(1))
	srv.NoListen = true
	c := start(t, srv)
	k, err := c.Call(t.Context(), "nope", json.RawMessage(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = k.Recv()
	k.Close()
	var re *RPCError
	if !errors.As(err, &re) || re.Message != "unknown tool nope" {
		t.Errorf("got %v, want the server's JSON-RPC error", err)
	}
	down := New(Config{URL: "http://127.0.0.1:1/mcp"})
	defer down.Close()
	if _, err := down.Tools(t.Context()); err == nil {
		t.Error("got no error from a server that is down")
	}
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		io.WriteString(w, "  boom \n")
	}))
	defer bad.Close()
	bc := New(Config{URL: bad.URL})
	defer bc.Close()
	if _, err := bc.Tools(t.Context()); err == nil || err.Error() != "mcp initialize: the MCP server answered HTTP 500: boom" {
		t.Errorf("got %v", err)
	}
}
