package mcpgw

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/redact"
	"github.com/sluice-gw/sluice/internal/tools"
	"github.com/sluice-gw/sluice/internal/tools/mcp/mcptest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// upstream serves an MCP test server on loopback until the test ends.
func upstream(t *testing.T, srv *mcptest.Server) string {
	t.Helper()
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

// rig is a gateway in front of two test servers: docs (its filter denies "secret*") and calc.
type rig struct {
	docs, calc *mcptest.Server
	set        *tools.Set
	gw         *Gateway
}

func newRig(t *testing.T, timeout time.Duration, store Store) *rig {
	t.Helper()
	return newRigLive(t, timeout, time.Minute, store)
}

// newRigLive is newRig with calc's liveness.
func newRigLive(t *testing.T, timeout, liveness time.Duration, store Store) *rig {
	t.Helper()
	r := &rig{docs: mcptest.New(search, leak, secretTool), calc: mcptest.New(add, slow, failing)}
	r.calc.Listening = make(chan struct{}, 1) // TestListChanged waits for the set's GET stream
	r.set = tools.New([]tools.Spec{
		{Name: "docs", MCP: &tools.MCP{URL: upstream(t, r.docs), Timeout: time.Minute, Liveness: time.Minute, Deny: []string{"secret*"}}},
		{Name: "calc", MCP: &tools.MCP{URL: upstream(t, r.calc), Timeout: timeout, Liveness: liveness}},
	}, tools.Options{})
	t.Cleanup(func() { r.set.Close() })
	rules, err := redact.Compile(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	r.gw = New(Options{Servers: r.set, Store: store, RedactJSON: rules.RedactJSON, RedactText: rules.Redact})
	return r
}

// serve is the gateway at a loopback URL, every request from caller.
func (r *rig) serve(t *testing.T, c Caller) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { r.gw.Serve(w, req, c) }))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

var search = mcptest.Tool{Name: "search", Description: "Searches the docs.",
	Schema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`),
	Run: func(_ context.Context, args json.RawMessage, progress func(float64, float64, string)) (string, bool) {
		for i := 1; i <= 3; i++ {
			progress(float64(i), 3, "page")
		}
		return "3 hits for " + string(args), false
	}}

// leak answers with a secret it read, as a tool that reads a file or the environment.
var leak = mcptest.Tool{Name: "env", Run: func(context.Context, json.RawMessage, func(float64, float64, string)) (string, bool) {
	return "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD", false
}}

var secretTool = mcptest.Tool{Name: "secret-admin", Run: func(context.Context, json.RawMessage, func(float64, float64, string)) (string, bool) {
	return "must never run", false
}}

var add = mcptest.Tool{Name: "add", Run: func(_ context.Context, args json.RawMessage, _ func(float64, float64, string)) (string, bool) {
	var a struct{ A, B int }
	_ = json.Unmarshal(args, &a)
	b, _ := json.Marshal(a.A + a.B)
	return string(b), false
}}

// slow runs until it is cancelled.
var slow = mcptest.Tool{Name: "slow", Run: func(ctx context.Context, _ json.RawMessage, progress func(float64, float64, string)) (string, bool) {
	progress(1, 0, "started")
	<-ctx.Done()
	return "cancelled", true
}}

var failing = mcptest.Tool{Name: "fail", Run: func(context.Context, json.RawMessage, func(float64, float64, string)) (string, bool) {
	return "the disk is full", true
}}

// client is a plain MCP client of the gateway.
type client struct {
	t   *testing.T
	url string
	sid string
}

// reply is what the gateway answered one POST: its status and messages.
type reply struct {
	status int
	header http.Header
	msgs   []map[string]any
}

// last is the reply's last message.
func (r reply) last() map[string]any {
	if len(r.msgs) == 0 {
		return nil
	}
	return r.msgs[len(r.msgs)-1]
}

func (c *client) post(body string) reply {
	c.t.Helper()
	return c.postCtx(context.Background(), body)
}

func (c *client) postCtx(ctx context.Context, body string) reply {
	c.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	return reply{status: resp.StatusCode, header: resp.Header, msgs: messages(c.t, resp)}
}

// messages reads a JSON or an event-stream answer.
func messages(t *testing.T, resp *http.Response) []map[string]any {
	t.Helper()
	var out []map[string]any
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m map[string]any
				if err := json.Unmarshal([]byte(data), &m); err != nil {
					t.Fatalf("event %q: %v", data, err)
				}
				out = append(out, m)
			}
		}
		return out
	}
	b, _ := io.ReadAll(resp.Body)
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body %q: %v", b, err)
	}
	return append(out, m)
}

// connect starts a session.
func connect(t *testing.T, url string) *client {
	t.Helper()
	c := &client{t: t, url: url}
	r := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	if r.status != http.StatusOK || r.header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: got %d %v", r.status, r.msgs)
	}
	c.sid = r.header.Get("Mcp-Session-Id")
	if r := c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.status != http.StatusAccepted {
		t.Fatalf("initialized: got %d, want 202", r.status)
	}
	return c
}

// names is the tool names tools/list answers.
func (c *client) names() []string {
	c.t.Helper()
	r := c.post(`{"jsonrpc":"2.0","id":"l","method":"tools/list"}`)
	res, _ := r.last()["result"].(map[string]any)
	list, _ := res["tools"].([]any)
	out := []string{}
	for _, t := range list {
		out = append(out, t.(map[string]any)["name"].(string))
	}
	return out
}

func call(name, args string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `,"_meta":{"progressToken":"tok-1"}}}`
}

// text is the first text block of a result.
func text(m map[string]any) (string, bool) {
	res, _ := m["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return "", false
	}
	isErr, _ := res["isError"].(bool)
	s, _ := content[0].(map[string]any)["text"].(string)
	return s, isErr
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}
