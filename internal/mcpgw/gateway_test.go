package mcpgw

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/tools/mcp/mcptest"
)

// tools/list is the union of both servers' tools, named server__tool, minus what a server's
// filter denies; a call streams the server's progress with the caller's token, then the
// result as the server sent it.
func TestListAndCall(t *testing.T) {
	r := newRig(t, time.Minute, nil)
	c := connect(t, r.serve(t, Caller{All: true}))
	want := []string{"calc__add", "calc__slow", "calc__fail", "docs__search", "docs__env"}
	if got := c.names(); !slices.Equal(got, want) {
		t.Fatalf("got tools %v, want %v", got, want)
	}
	res := c.post(call("docs__search", `{"q":"mcp"}`))
	if ct := res.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("got content type %q, want an event stream", ct)
	}
	if len(res.msgs) != 4 {
		t.Fatalf("got %d messages, want 3 progress and the result: %v", len(res.msgs), res.msgs)
	}
	for i, m := range res.msgs[:3] {
		p, _ := m["params"].(map[string]any)
		if m["method"] != "notifications/progress" || p["progressToken"] != "tok-1" || p["progress"] != float64(i+1) || p["total"] != float64(3) {
			t.Errorf("progress %d: got %v, want progress %d of 3 with the caller's token", i, m, i+1)
		}
	}
	if txt, isErr := text(res.last()); txt != `3 hits for {"q":"mcp"}` || isErr || res.last()["id"] != float64(7) {
		t.Errorf("got result %v, want the server's", res.last())
	}
	// A call without Accept: text/event-stream gets the result alone, as JSON.
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(call("calc__add", `{"a":2,"b":3}`)))
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msgs := messages(t, resp)
	resp.Body.Close()
	if txt, _ := text(msgs[len(msgs)-1]); len(msgs) != 1 || txt != "5" {
		t.Errorf("got %v, want the result 5 alone", msgs)
	}
}

// A tool a server's filter denies is invisible and its call is refused as unknown, without
// reaching the server; an error result comes as the server sent it.
func TestFilteredAndErrors(t *testing.T) {
	r := newRig(t, time.Minute, nil)
	c := connect(t, r.serve(t, Caller{All: true}))
	if got := c.post(call("docs__secret-admin", `{}`)).last(); errCode(got) != codeInvalidParams {
		t.Errorf("got %v, want the filtered tool unknown", got)
	}
	if n := r.docs.Runs("secret-admin"); n != 0 {
		t.Errorf("the filtered tool ran %d times", n)
	}
	if got := c.post(call("nope__x", `{}`)).last(); errCode(got) != codeInvalidParams {
		t.Errorf("got %v, want an unknown tool", got)
	}
	if txt, isErr := text(c.post(call("calc__fail", `{}`)).last()); txt != "the disk is full" || !isErr {
		t.Errorf("got %q (isError %v), want the server's error result", txt, isErr)
	}
}

// A key limited to one server sees and calls only its tools; a tools pattern narrows further.
func TestCallerAccess(t *testing.T) {
	r := newRig(t, time.Minute, nil)
	one := connect(t, r.serve(t, Caller{Key: "k1", Servers: []string{"calc"}}))
	if got := one.names(); !slices.Equal(got, []string{"calc__add", "calc__slow", "calc__fail"}) {
		t.Errorf("got %v, want calc's tools only", got)
	}
	if got := one.post(call("docs__search", `{}`)).last(); errCode(got) != codeInvalidParams {
		t.Errorf("got %v, want docs__search unknown to a calc key", got)
	}
	pat := connect(t, r.serve(t, Caller{Key: "k2", Tools: []string{"docs__sea*"}}))
	if got := pat.names(); !slices.Equal(got, []string{"docs__search"}) {
		t.Errorf("got %v, want docs__search only", got)
	}
	none := connect(t, r.serve(t, Caller{Key: "k3"}))
	if got := none.names(); len(got) != 0 {
		t.Errorf("got %v, want nothing for a key without mcp access", got)
	}
}

// A secret in a tool's result is masked before it reaches the client.
func TestResultRedacted(t *testing.T) {
	r := newRig(t, time.Minute, nil)
	c := connect(t, r.serve(t, Caller{All: true}))
	txt, _ := text(c.post(call("docs__env", `{}`)).last())
	if strings.Contains(txt, "sk-proj-abcdef") || !strings.HasPrefix(txt, "OPENAI_API_KEY=") {
		t.Errorf("got %q, want the key masked", txt)
	}
}

// The edge's refusals: a rate limit and a guardrail, each with its code; the call never
// reaches the server.
func TestRefusals(t *testing.T) {
	r := newRig(t, time.Minute, nil)
	limited := connect(t, r.serve(t, Caller{All: true, Admit: func(context.Context) error {
		return &Refusal{Limited: true, Message: "Rate limit reached", RetryAfter: 2 * time.Second}
	}}))
	got := limited.post(call("calc__add", `{"a":1,"b":1}`)).last()
	if errCode(got) != codeLimited || got["error"].(map[string]any)["data"].(map[string]any)["retry_after_ms"] != float64(2000) {
		t.Errorf("got %v, want a rate limit with its retry", got)
	}
	guarded := connect(t, r.serve(t, Caller{All: true, Check: func(_ context.Context, args string) error {
		if strings.Contains(args, "drop") {
			return &Refusal{Message: "blocked by guardrail 'no-drop'"}
		}
		return nil
	}}))
	if got := guarded.post(call("calc__add", `{"a":"drop"}`)).last(); errCode(got) != codeRefused {
		t.Errorf("got %v, want a guardrail refusal", got)
	}
	down := connect(t, r.serve(t, Caller{All: true, Admit: func(context.Context) error { return errors.New("redis down") }}))
	if got := down.post(call("calc__add", `{}`)).last(); errCode(got) != codeUnavailable {
		t.Errorf("got %v, want unavailable", got)
	}
	if n := r.calc.Runs("add"); n != 0 {
		t.Errorf("refused calls ran %d times", n)
	}
}

// notifications/cancelled ends the call at the gateway (no response) and at the server
// (its notifications/cancelled); the server's timeout ends a call with an error result.
func TestCancelAndTimeout(t *testing.T) {
	r := newRig(t, time.Minute, nil)
	c := connect(t, r.serve(t, Caller{All: true}))
	sc := c.slow()
	if got := c.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}`); got.status != http.StatusAccepted {
		t.Fatalf("got %d, want 202", got.status)
	}
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"id":7`) {
			t.Errorf("got %q after the cancellation, want no response", sc.Text())
		}
	}
	if got := r.calc.Cancelled(); len(got) != 1 {
		t.Errorf("got the server sent cancellations %v, want one", got)
	}

	short := newRig(t, 200*time.Millisecond, nil)
	c = connect(t, short.serve(t, Caller{All: true}))
	if txt, isErr := text(c.post(call("calc__slow", `{}`)).last()); !isErr || !strings.Contains(txt, "did not answer within 200ms") {
		t.Errorf("got %q, want the timeout as an error result", txt)
	}
	// A streamed answer silent for longer than the server's liveness is cancelled too.
	silent := newRigLive(t, time.Minute, 200*time.Millisecond, nil)
	c = connect(t, silent.serve(t, Caller{All: true}))
	if txt, isErr := text(c.post(call("calc__slow", `{}`)).last()); !isErr || !strings.Contains(txt, "went silent for 200ms") {
		t.Errorf("got %q, want the liveness as an error result", txt)
	}
	if got := silent.calc.Cancelled(); len(got) != 1 {
		t.Errorf("got the server told %v, want one cancellation", got)
	}
}

// Sessions: a request needs one; one of another key, or ended, is not found; one started on
// a replica is served by another that shares the store.
func TestSessions(t *testing.T) {
	store := &Memory{}
	a, b := newRig(t, time.Minute, store), newRig(t, time.Minute, store)
	ca := connect(t, a.serve(t, Caller{Key: "k1", All: true}))
	moved := &client{t: t, url: b.serve(t, Caller{Key: "k1", All: true}), sid: ca.sid}
	if got := moved.post(call("calc__add", `{"a":1,"b":2}`)).last(); got["result"] == nil {
		t.Errorf("got %v on the second replica, want the result", got)
	}
	other := &client{t: t, url: b.serve(t, Caller{Key: "k2", All: true}), sid: ca.sid}
	if got := other.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`); got.status != http.StatusNotFound {
		t.Errorf("got %d for another key's session, want 404", got.status)
	}
	none := &client{t: t, url: ca.url}
	if got := none.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`); got.status != http.StatusBadRequest {
		t.Errorf("got %d without a session, want 400", got.status)
	}
	req, _ := http.NewRequest(http.MethodDelete, ca.url, nil)
	req.Header.Set("Mcp-Session-Id", ca.sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := ca.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`); resp.StatusCode != http.StatusNoContent || got.status != http.StatusNotFound {
		t.Errorf("got DELETE %d then %d, want 204 then 404", resp.StatusCode, got.status)
	}
}

// Bad messages get a JSON-RPC error with a 4xx status, never a 500.
func TestBadMessages(t *testing.T) {
	r := newRig(t, time.Minute, nil)
	c := connect(t, r.serve(t, Caller{All: true}))
	for _, tc := range []struct {
		name, body string
		status     int
		code       float64
	}{
		{"not json", `{"jsonrpc":`, 400, codeParse},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, 400, codeInvalidRequest},
		{"version", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, 400, codeInvalidRequest},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, 400, codeInvalidRequest},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`, 200, codeMethodNotFound},
		{"call without name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`, 200, codeInvalidParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := c.post(tc.body)
			if got.status != tc.status || errCode(got.last()) != tc.code {
				t.Errorf("got %d %v, want %d with code %v", got.status, got.msgs, tc.status, tc.code)
			}
		})
	}
	// A browser page of an origin not allowed is refused (DNS rebinding).
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("Origin", "http://evil.example")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("got %v %v for a foreign Origin, want 403", resp.StatusCode, err)
	} else {
		resp.Body.Close()
	}
	// The version a client asks for, when the gateway speaks it; else the newest.
	for ask, want := range map[string]string{"2025-03-26": "2025-03-26", "2099-01-01": Versions[0]} {
		got := (&client{t: t, url: c.url}).post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + ask + `"}}`)
		if v := got.last()["result"].(map[string]any)["protocolVersion"]; v != want {
			t.Errorf("asked %s: got %v, want %s", ask, v, want)
		}
	}
}

// The GET stream says notifications/tools/list_changed when a server's list changed, and the
// next tools/list has the new tool.
func TestListChanged(t *testing.T) {
	r := newRig(t, time.Minute, nil)
	c := connect(t, r.serve(t, Caller{All: true}))
	c.names() // both lists read
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	<-r.calc.Listening // the set follows calc's changes
	r.calc.SetTools(add, mcptest.Tool{Name: "mul", Run: add.Run})
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			_ = json.Unmarshal([]byte(data), &m)
			if m["method"] != "notifications/tools/list_changed" {
				t.Fatalf("got %v, want list_changed", m)
			}
			break
		}
	}
	if got := c.names(); !slices.Contains(got, "calc__mul") || slices.Contains(got, "calc__slow") {
		t.Errorf("got %v after the change, want calc's new list", got)
	}
}

// bus is a Bus in memory: every message goes to every subscription, at once.
type bus struct {
	mu   sync.Mutex
	subs []func(string)
}

func (b *bus) Publish(_ context.Context, msg string) error {
	b.mu.Lock()
	subs := slices.Clone(b.subs)
	b.mu.Unlock()
	for _, fn := range subs {
		fn(msg)
	}
	return nil
}

func (b *bus) Subscribe(_ context.Context, fn func(string)) (io.Closer, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.subs = append(b.subs, fn)
	return io.NopCloser(nil), nil
}

// A cancellation sent to a replica that does not run the call reaches the one that does,
// through the Bus; the server is told.
func TestCancelOnAnotherReplica(t *testing.T) {
	store, b := &Memory{}, &bus{}
	a := newRig(t, time.Minute, store)
	other := newRig(t, time.Minute, store)
	a.gw = New(Options{Servers: a.set, Store: store, Bus: b})
	other.gw = New(Options{Servers: other.set, Store: store, Bus: b})
	c := connect(t, a.serve(t, Caller{All: true}))
	sc := c.slow()
	moved := &client{t: t, url: other.serve(t, Caller{All: true}), sid: c.sid}
	moved.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	for sc.Scan() { // a ends the call, with no response (not the timeout's)
		if strings.Contains(sc.Text(), `"id":7`) {
			t.Errorf("got %q, want the call cancelled without a response", sc.Text())
		}
	}
	if got := a.calc.Cancelled(); len(got) != 1 {
		t.Errorf("got the server told %v, want one cancellation", got)
	}
}

// slow starts calc__slow (id 7) and returns its event stream once the tool runs.
func (c *client) slow() *bufio.Scanner {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(call("calc__slow", `{}`)))
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { resp.Body.Close() })
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), "notifications/progress") {
	}
	return sc
}

// TestSlowBody: a message whose body does not arrive within limits.body_timeout is cut with
// 408 and a JSON-RPC error, like the /v1 routes' bodies.
func TestSlowBody(t *testing.T) {
	r := newRig(t, time.Minute, nil)
	r.gw.o.BodyTimeout = 100 * time.Millisecond
	addr := strings.TrimPrefix(strings.TrimSuffix(r.serve(t, Caller{All: true}), "/mcp"), "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"Content-Length: 64\r\n\r\n{\"jsonrpc\":")
	conn.SetReadDeadline(time.Now().Add(20 * time.Second)) // a hang fails the test, it does not time it
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("got %v, want a 408", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 408 || !strings.Contains(string(body), `"code":-32600`) || !strings.Contains(string(body), "limits.body_timeout") {
		t.Fatalf("got %d %s, want 408 with a JSON-RPC invalid request", resp.StatusCode, body)
	}
}
