package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
	"github.com/sluice-gw/sluice/internal/tools/mcp/mcptest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// mcpDocs is an MCP test server with two tools.
func mcpDocs(t *testing.T) string {
	t.Helper()
	run := func(_ context.Context, args json.RawMessage, _ func(float64, float64, string)) (string, bool) {
		return "hits for " + string(args), false
	}
	return mcpServe(t, mcptest.New(mcptest.Tool{Name: "search", Run: run}, mcptest.Tool{Name: "fetch", Run: run}))
}

// mcpServe serves srv on loopback until the test ends and returns its URL.
func mcpServe(t *testing.T, srv *mcptest.Server) string {
	t.Helper()
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

// mcpPost sends one MCP message with the key and session; it returns the reply, the last
// message of its body (JSON or event stream) and the session it names.
func mcpPost(t *testing.T, url, key, sid, body string) (reply, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, header: resp.Header, body: b}
	last := r.body
	if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		last = []byte(strings.TrimPrefix(lines[len(lines)-1], "data: "))
	}
	var m map[string]any
	_ = json.Unmarshal(last, &m)
	return r, m
}

func mcpInit(t *testing.T, url, key string) string {
	t.Helper()
	r, _ := mcpPost(t, url, key, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if r.status != http.StatusOK || r.header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: got %d %s", r.status, r.body)
	}
	return r.header.Get("Mcp-Session-Id")
}

func mcpNames(t *testing.T, url, key, sid string) []string {
	t.Helper()
	_, m := mcpPost(t, url, key, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var out []string
	res, _ := m["result"].(map[string]any)
	list, _ := res["tools"].([]any)
	for _, tl := range list {
		out = append(out, tl.(map[string]any)["name"].(string))
	}
	return out
}

func mcpCall(name, args string) string {
	return `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
}

func rpcCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

const (
	mcpAll   = "sk-mcp-all-0123456789abcdefghijklmnop"
	mcpFetch = "sk-mcp-fetch-0123456789abcdefghijklm"
	mcpNone  = "sk-mcp-none-0123456789abcdefghijklmn"
)

func mcpConfig(extra string) string {
	return simConfig + `
tools:
  docs: {mcp: {url: "${DOCS}", headers: {Authorization: "Bearer upstream-secret"}}}
guardrails:
  no-drop: {stage: input, kind: terms, terms: [droptable]}
keys:
  - {name: all, hash: ` + auth.Hash(mcpAll) + `, mcp: {servers: ["*"]}, limits: {rpm: 3, tool_calls_per_minute: 2}, guardrails: [no-drop]}
  - {name: fetch-only, hash: ` + auth.Hash(mcpFetch) + `, mcp: {tools: ["docs__fetch"]}}
  - {name: none, hash: ` + auth.Hash(mcpNone) + `}
` + extra
}

// /mcp takes the same virtual keys as /v1: none is a 401; each key sees and calls what its
// mcp block allows; its tool calls count against tool_calls_per_minute; its input
// guardrails screen the arguments.
func TestMCPKeys(t *testing.T) {
	url := serveGate(t, mcpConfig(""), map[string]string{"DOCS": mcpDocs(t)}, time.Hour, nil)
	r, _ := mcpPost(t, url, "", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if r.status != http.StatusUnauthorized || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("got %d %q without a key, want 401 with WWW-Authenticate", r.status, r.header.Get("WWW-Authenticate"))
	}
	sid := mcpInit(t, url, mcpAll)
	if got := mcpNames(t, url, mcpAll, sid); !slices.Equal(got, []string{"docs__search", "docs__fetch"}) {
		t.Errorf("got %v, want both tools", got)
	}
	// Another key does not find the session.
	if r, _ := mcpPost(t, url, mcpFetch, sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); r.status != http.StatusNotFound {
		t.Errorf("got %d for another key's session, want 404", r.status)
	}
	fsid := mcpInit(t, url, mcpFetch)
	if got := mcpNames(t, url, mcpFetch, fsid); !slices.Equal(got, []string{"docs__fetch"}) {
		t.Errorf("got %v, want docs__fetch only", got)
	}
	if _, m := mcpPost(t, url, mcpFetch, fsid, mcpCall("docs__search", `{}`)); rpcCode(m) != -32602 {
		t.Errorf("got %v, want docs__search unknown to the fetch-only key", m)
	}
	nsid := mcpInit(t, url, mcpNone)
	if got := mcpNames(t, url, mcpNone, nsid); len(got) != 0 {
		t.Errorf("got %v, want no tools for a key without mcp", got)
	}

	if _, m := mcpPost(t, url, mcpAll, sid, mcpCall("docs__search", `{"q":"droptable"}`)); rpcCode(m) != -32003 {
		t.Errorf("got %v, want the guardrail's refusal", m)
	}
	// The refused call counted (as a model request its guardrail refuses does): one more runs.
	if _, m := mcpPost(t, url, mcpAll, sid, mcpCall("docs__search", `{"q":"go"}`)); m["result"] == nil {
		t.Fatalf("got %v, want a result", m)
	}
	_, m := mcpPost(t, url, mcpAll, sid, mcpCall("docs__search", `{"q":"go"}`))
	if e, _ := m["error"].(map[string]any); rpcCode(m) != -32029 || !strings.Contains(e["message"].(string), "tool calls") {
		t.Errorf("got %v, want tool_calls_per_minute (2) reached", m)
	}
	// The two admitted calls count against rpm (3), shared with model calls; the call its
	// tool_calls_per_minute refused holds nothing (released, as admission releases a model
	// request's team reservation): one model call runs, the next is refused.
	if r := do(t, "POST", url+"/v1/chat/completions", mcpAll, chatBody("default", false, "")); r.status != http.StatusOK {
		t.Errorf("got %d, want the key's third request of its rpm (3) served", r.status)
	}
	if r := do(t, "POST", url+"/v1/chat/completions", mcpAll, chatBody("default", false, "")); r.status != http.StatusTooManyRequests {
		t.Errorf("got %d, want the key's rpm (3) spent by two tool calls and a model call", r.status)
	}
	if strings.Contains(string(r.body), "upstream-secret") {
		t.Error("the server's credentials reached the client")
	}
}

// Two replicas on one Redis: a session started on one is served by the other, and a
// cancellation sent to the other reaches the call running on the first (pub/sub).
func TestMCPSessionAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t)
	docs := mcptest.New(mcptest.Tool{Name: "fetch", Run: func(_ context.Context, args json.RawMessage, _ func(float64, float64, string)) (string, bool) {
		return "hits for " + string(args), false
	}}, mcptest.Tool{Name: "slow", Run: func(ctx context.Context, _ json.RawMessage, progress func(float64, float64, string)) (string, bool) {
		progress(1, 0, "started")
		<-ctx.Done()
		return "cancelled", true
	}})
	vars := map[string]string{"DOCS": mcpServe(t, docs), "REDIS_URL": srv.URL}
	yaml := mcpConfig("redis: {url: \"${REDIS_URL}\", timeout: 5s, on_failure: closed}\n")
	a, b := serveGate(t, yaml, vars, time.Hour, nil), serveGate(t, yaml, vars, time.Hour, nil)
	sid := mcpInit(t, a, mcpFetch)
	_, m := mcpPost(t, b, mcpFetch, sid, mcpCall("docs__fetch", `{"u":"x"}`))
	if res, _ := m["result"].(map[string]any); res == nil {
		t.Fatalf("got %v on the other replica, want the result", m)
	}
	if r, _ := mcpPost(t, b, mcpFetch, "0123456789abcdef0123456789abcdef", `{"jsonrpc":"2.0","id":1,"method":"ping"}`); r.status != http.StatusNotFound {
		t.Errorf("got %d for an unknown session, want 404", r.status)
	}

	asid := mcpInit(t, a, mcpAll)
	req, _ := http.NewRequest(http.MethodPost, a+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"docs__slow","arguments":{},"_meta":{"progressToken":1}}}`))
	req.Header.Set("Authorization", "Bearer "+mcpAll)
	req.Header.Set("Mcp-Session-Id", asid)
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), "notifications/progress") {
	} // the tool runs on a
	if r, _ := mcpPost(t, b, mcpAll, asid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`); r.status != http.StatusAccepted {
		t.Fatalf("got %d, want 202", r.status)
	}
	for sc.Scan() { // a ends the call without a response
		if strings.Contains(sc.Text(), `"id":9`) {
			t.Errorf("got %q, want no response to a cancelled call", sc.Text())
		}
	}
	if got := docs.Cancelled(); len(got) != 1 {
		t.Errorf("got the server told %v, want one cancellation", got)
	}
}

// Without an MCP server configured, /mcp is a 404 in JSON-RPC's shape.
func TestMCPOff(t *testing.T) {
	url := serveGate(t, simConfig, nil, time.Hour, nil)
	if r, m := mcpPost(t, url, "", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`); r.status != http.StatusNotFound || rpcCode(m) != -32601 {
		t.Errorf("got %d %s, want 404", r.status, r.body)
	}
}

// /mcp's answers are what api/openapi.yaml says they are.
func TestMCPOpenAPI(t *testing.T) {
	url := serveGate(t, mcpConfig(""), map[string]string{"DOCS": mcpDocs(t)}, time.Hour, nil)
	sc := newSpecCheck(t, &gateway{url: url})
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	sc.call(t, "POST", "/mcp", "", ping, http.StatusUnauthorized)
	x := sc.call(t, "POST", "/mcp", mcpFetch, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`, http.StatusOK)
	sid := x.resp.Header.Get("Mcp-Session-Id")
	sc.call(t, "POST", "/mcp", mcpFetch, ping, http.StatusOK, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-06-18")
	sc.call(t, "POST", "/mcp", mcpFetch, mcpCall("docs__fetch", `{}`), http.StatusOK, "Mcp-Session-Id", sid, "Accept", "application/json")
	sc.call(t, "POST", "/mcp", mcpFetch, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, http.StatusAccepted, "Mcp-Session-Id", sid)
	sc.call(t, "POST", "/mcp", mcpFetch, ping, http.StatusBadRequest)
	sc.call(t, "GET", "/mcp", mcpFetch, "", http.StatusNotAcceptable, "Mcp-Session-Id", sid, "Accept", "application/json")
	sc.call(t, "DELETE", "/mcp", mcpFetch, "", http.StatusNoContent, "Mcp-Session-Id", sid)
	sc.call(t, "POST", "/mcp", mcpFetch, ping, http.StatusNotFound, "Mcp-Session-Id", sid)
}

// A tool call through /mcp records an execute_tool span (server, tool, key, outcome), the
// tool duration by server, tool and outcome, and its count on the access line; never its
// arguments or result.
func TestMCPTelemetry(t *testing.T) {
	var log logBuffer
	url, srv := serveServer(t, mcpConfig(""), map[string]string{"DOCS": mcpDocs(t)}, time.Hour, &log)
	m := recordTelemetry(srv)
	sid := mcpInit(t, url, mcpFetch)
	if _, res := mcpPost(t, url, mcpFetch, sid, mcpCall("docs__fetch", `{"q":"private-argument"}`)); res["result"] == nil {
		t.Fatalf("got %v, want a result", res)
	}
	var span sdktrace.ReadOnlySpan
	for _, sp := range m.spans.Ended() {
		if sp.Name() == "execute_tool docs__fetch" {
			span = sp
		}
	}
	if span == nil {
		t.Fatal("no execute_tool span")
	}
	for k, want := range map[string]string{"sluice.tool": "docs", "gen_ai.tool.name": "docs__fetch", "sluice.key.name": "fetch-only", "sluice.outcome": "ok"} {
		if got := attr(span.Attributes(), k); got != want {
			t.Errorf("span %s: got %q, want %q", k, got, want)
		}
	}
	p := m.histogram(t, "sluice.tool.duration")
	for k, want := range map[string]string{"sluice.tool": "docs", "gen_ai.tool.name": "docs__fetch", "sluice.outcome": "ok"} {
		if got := attr(p.Attributes.ToSlice(), k); got != want {
			t.Errorf("metric %s: got %q, want %q", k, got, want)
		}
	}
	lines := log.String()
	if !strings.Contains(lines, "path=/mcp") || !strings.Contains(lines, "tools=1") || !strings.Contains(lines, "key_name=fetch-only") {
		t.Errorf("got access lines %s, want the call counted on POST /mcp's, with the key", lines)
	}
	for _, sp := range m.spans.Ended() {
		for _, a := range sp.Attributes() {
			if strings.Contains(a.Value.Emit(), "private-argument") {
				t.Errorf("span %s carries the arguments", sp.Name())
			}
		}
	}
	if strings.Contains(lines, "private-argument") || strings.Contains(lines, "hits for") {
		t.Error("the access log carries the arguments or the result")
	}
}
