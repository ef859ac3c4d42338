package traces

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/tools/mcp/mcptest"
)

// Distinctive strings planted in the traffic: none may reach a span unless capture_content
// is on, and the keys never.
const (
	prompt      = "PROMPT-ZEBRA-4711"
	completion  = "COMPLETION-QUAGGA-0815"
	providerKey = "sk-mock-TRACEKEY-9a8b7c6d5e4f3a2b1c0d"
	adminToken  = "admin-TRACE-token-31337"
	mcpToken    = "mcp-TRACE-credential-2718"
)

// say is completion as a mock script's say= option: its first letter percent-encoded, so that
// the target's name (which spans and metrics show: it is configuration, not content) does
// not hold the completion the mock answers.
const say = "%43OMPLETION-QUAGGA-0815"

// config is the gateway's configuration; CAPTURE is telemetry.capture_content. The first target
// of fallback fails with a 500 whose message quotes the request's headers, the provider key
// among them (as some upstreams do); agent's model calls four server-side tools: an HTTP
// one, two simulated ones (one fails) and an MCP server's.
const config = `
listen: "${SLUICE_LISTEN}"
auth: {admin_token: "${SLUICE_ADMIN_TOKEN}"}
providers:
  mock: {kind: openai-compatible, base_url: "${MOCK_URL}/v1", api_key: "${MOCK_KEY}"}
models:
  default: ["mock/text?len=0&say=` + say + `&chunk=4"]
  fallback: ["mock/text?fail=500&quote=all", "mock/text?len=0&say=` + say + `"]
  agent:
    targets: ['mock/tools?calls=4&name=count_rows,progress,broken,docs__search&args={"table":"orders"}&then=echo']
    tools: [count_rows, progress, broken, docs]
tools:
  count_rows: {http: {url: "${TOOL_URL}/count", timeout: 30s}}
  progress: {sim: {steps: 2, interval: 5ms}}
  broken: {sim: {steps: 1, interval: 5ms, fail: true}}
  docs: {mcp: {url: "${MCP_URL}", headers: {Authorization: "Bearer ${MCP_TOKEN}"}, timeout: 30s}}
telemetry: {otlp_endpoint: "${OTLP_URL}", capture_content: CAPTURE}
`

// upstream is the mock provider, noting the traceparent and the credential of every call.
type upstream struct {
	*httptest.Server
	mu      sync.Mutex
	parents []string // traceparent headers, in order
	auth    map[string]bool
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{auth: map[string]bool{}}
	mock := mockllm.New(mockllm.Options{})
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.parents = append(u.parents, r.Header.Get("Traceparent"))
		u.auth[r.Header.Get("Authorization")] = true
		u.mu.Unlock()
		mock.ServeHTTP(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

// parentsOf are the traceparents of the upstream calls made in trace id.
func (u *upstream) parentsOf(id string) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	for _, p := range u.parents {
		if strings.Contains(p, "-"+id+"-") {
			out = append(out, p)
		}
	}
	return out
}

// countRows is the HTTP tool: it answers the arguments back with a count.
func countRows(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var args map[string]any
		_ = json.NewDecoder(r.Body).Decode(&args)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"rows": 1200, "args": args})
	}))
	t.Cleanup(s.Close)
	return s
}

// sent is the traffic of one gateway: the answer of each kind of request.
type sent struct {
	key                      string // the virtual key the requests used
	admin                    reply  // the key's creation
	plain, stream, fall, run reply
	mcpInit, mcpCall         reply // an MCP client's initialize and tools/call through /mcp
	// parent is the span the client's traceparent of plain named; trace its trace.
	trace, parent string
}

// all are the answers of every request the test sent.
func (s *sent) all() map[string]reply {
	return map[string]reply{"admin": s.admin, "plain": s.plain, "stream": s.stream, "fallback": s.fall,
		"run": s.run, "mcp initialize": s.mcpInit, "mcp tools/call": s.mcpCall}
}

// traffic sends one request of each kind through g.
func traffic(t *testing.T, g *gateway) *sent {
	t.Helper()
	r := g.post(t, "/admin/keys", adminToken, `{"name":"tracer","mcp":{"servers":["docs"]}}`)
	var k struct{ Key string }
	if r.status != 201 || json.Unmarshal(r.body, &k) != nil || k.Key == "" {
		t.Fatalf("POST /admin/keys: %d %s", r.status, r.body)
	}
	r.status = 200 // as the others
	// The client's own trace: a new one per gateway, so that each has its own.
	s := &sent{key: k.Key, admin: r, trace: randHex(16), parent: randHex(8)}
	msg := `"messages":[{"role":"user","content":"tell me about ` + prompt + `"}]`
	s.plain = g.post(t, "/v1/chat/completions", s.key,
		`{"model":"default","max_tokens":50,"temperature":0.5,"top_p":0.9,`+msg+`}`,
		"Traceparent", "00-"+s.trace+"-"+s.parent+"-01", "Tracestate", "vendor=opaque")
	s.stream = g.post(t, "/v1/chat/completions", s.key,
		`{"model":"default","stream":true,"stream_options":{"include_usage":true},`+msg+`}`)
	s.fall = g.post(t, "/v1/chat/completions", s.key, `{"model":"fallback",`+msg+`}`)
	s.run = g.post(t, "/v1/ui/chat", s.key, `{"id":"chat-1","model":"agent","trigger":"submit-message",`+
		`"messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"count the rows of `+prompt+`"}]}]}`)
	s.mcpInit = g.post(t, "/mcp", s.key, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":`+
		`{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"traces","version":"1"}}}`)
	session := s.mcpInit.header.Get("Mcp-Session-Id")
	s.mcpCall = g.post(t, "/mcp", s.key, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":`+
		`{"name":"docs__search","arguments":{"query":"`+prompt+`"}}}`, "Mcp-Session-Id", session,
		"MCP-Protocol-Version", "2025-06-18")
	if !strings.Contains(string(s.mcpCall.body), "3 pages about orders") {
		t.Fatalf("MCP tools/call: %d %s", s.mcpCall.status, s.mcpCall.body)
	}
	for name, r := range s.all() {
		if r.status != 200 {
			t.Fatalf("%s: %d %s", name, r.status, r.body)
		}
	}
	if !strings.Contains(string(s.plain.body), completion) || !strings.Contains(string(s.stream.body), completion) {
		t.Fatalf("the answers lack the planted completion: %s / %s", s.plain.body, s.stream.body)
	}
	if !strings.Contains(string(s.run.body), `"tool-output-available"`) || !strings.Contains(string(s.run.body), `"tool-output-error"`) {
		t.Fatalf("the run did not call its tools:\n%s", s.run.body)
	}
	return s
}

// TestTraces runs the gateway against Jaeger twice, with capture_content off then on, and
// checks the spans Jaeger stored, and the gateway's /metrics.
func TestTraces(t *testing.T) {
	t0 := time.Now()
	j := startJaeger(t)
	t1 := time.Now()
	bin := buildGateway(t)
	t.Logf("jaeger up in %v, gateway built in %v", t1.Sub(t0).Round(time.Millisecond), time.Since(t1).Round(time.Millisecond))
	up, tool := newUpstream(t), countRows(t)
	mcp := httptest.NewServer(mcptest.New(mcptest.Tool{Name: "search",
		Run: func(context.Context, json.RawMessage, func(float64, float64, string)) (string, bool) {
			return "3 pages about orders", false
		}}))
	t.Cleanup(mcp.Close)
	env := []string{"MOCK_URL=" + up.URL, "MOCK_KEY=" + providerKey, "TOOL_URL=" + tool.URL, "MCP_URL=" + mcp.URL,
		"MCP_TOKEN=" + mcpToken, "SLUICE_ADMIN_TOKEN=" + adminToken}

	g := startGateway(t, bin, j, "sluice-plain", strings.Replace(config, "CAPTURE", "false", 1), env...)
	s := traffic(t, g)
	if !up.auth["Bearer "+providerKey] {
		t.Fatalf("the upstream never saw the provider key: %v", up.auth)
	}
	secrets := []string{providerKey, adminToken, mcpToken, s.key}
	t.Run("metrics", func(t *testing.T) { checkMetrics(t, g, secrets, prompt, completion) })
	// The gateway flushes its spans when it stops: after that Jaeger holds all of them.
	g.p.stop(t)

	t.Run("one trace per request", func(t *testing.T) { oneTracePerRequest(t, j, g.service, s) })
	t.Run("traceparent continued", func(t *testing.T) { continued(t, j, up, s) })
	t.Run("GenAI attributes", func(t *testing.T) { genAI(t, j, s) })
	t.Run("fallback is two attempt spans", func(t *testing.T) { fallback(t, j, s) })
	t.Run("tool spans", func(t *testing.T) { toolSpans(t, j, s) })
	t.Run("MCP gateway tool span", func(t *testing.T) { mcpTool(t, j, s) })
	t.Run("no content, no key", func(t *testing.T) {
		absent(t, j, g.service, append(secrets, prompt, completion), false)
	})

	// capture_content: the prompt and the answer on the server span, still never a key.
	c := startGateway(t, bin, j, "sluice-capture", strings.Replace(config, "CAPTURE", "true", 1), env...)
	cs := traffic(t, c)
	c.p.stop(t)
	t.Run("capture_content", func(t *testing.T) {
		absent(t, j, c.service, []string{providerKey, adminToken, mcpToken, cs.key}, true)
		srv := serverSpan(t, j.trace(t, cs.plain.traceID(t)))
		in, _ := srv.tag("gen_ai.input.messages")
		out, _ := srv.tag("gen_ai.output.messages")
		if !strings.Contains(in, prompt) || !strings.Contains(out, completion) {
			t.Errorf("gen_ai.input.messages %q, gen_ai.output.messages %q: want the prompt and the answer", in, out)
		}
	})
}

// oneTracePerRequest: each request is one trace with one server span, and the service has
// no other trace.
func oneTracePerRequest(t *testing.T, j *jaeger, service string, s *sent) {
	want := map[string]string{}
	for name, r := range s.all() {
		want[r.traceID(t)] = name
	}
	if len(want) != len(s.all()) {
		t.Fatalf("trace ids %v: want one per request", want)
	}
	seen := map[string]bool{}
	for _, tr := range j.traces(t, service, "") {
		id := pad(tr.TraceID, 32)
		var servers []string
		for _, sp := range tr.Spans {
			if k, _ := sp.tag("span.kind"); k == "server" {
				servers = append(servers, sp.OperationName)
			}
		}
		name, ok := want[id]
		switch {
		case !ok:
			t.Errorf("trace %s (server spans %v) is no request's", id, servers)
		case len(servers) != 1:
			t.Errorf("%s: trace %s has server spans %v, want one", name, id, servers)
		default:
			seen[id] = true
		}
	}
	for id, name := range want {
		if !seen[id] {
			t.Errorf("%s: trace %s not in Jaeger", name, id)
		}
	}
}

// serverSpan is the trace's gateway server span.
func serverSpan(t *testing.T, tr *jTrace) jSpan {
	t.Helper()
	if tr == nil {
		t.Fatal("trace not in Jaeger")
	}
	for _, sp := range tr.Spans {
		if k, _ := sp.tag("span.kind"); k == "server" {
			return sp
		}
	}
	t.Fatalf("trace %s has no server span", tr.TraceID)
	return jSpan{}
}

// children are the spans of tr under parent whose span.kind is kind, in start order.
func children(tr *jTrace, parent jSpan, kind string) []jSpan {
	var out []jSpan
	for _, sp := range tr.Spans {
		if k, _ := sp.tag("span.kind"); k == kind && sp.parent() == pad(parent.SpanID, 16) {
			out = append(out, sp)
		}
	}
	return out
}

// continued: the client's traceparent is the server span's parent, the answer's
// traceresponse names the server span, and the upstream call's traceparent names it too.
func continued(t *testing.T, j *jaeger, up *upstream, s *sent) {
	if id := s.plain.traceID(t); id != s.trace {
		t.Fatalf("traceresponse trace %s, want the client's %s", id, s.trace)
	}
	tr := j.trace(t, s.trace)
	srv := serverSpan(t, tr)
	if got := srv.parent(); got != s.parent {
		t.Errorf("server span's parent %q, want the client's span %s", got, s.parent)
	}
	span := pad(srv.SpanID, 16)
	if got := s.plain.header.Get("Traceresponse"); got != "00-"+s.trace+"-"+span+"-01" {
		t.Errorf("traceresponse %q, want the server span %s", got, span)
	}
	if got := up.parentsOf(s.trace); len(got) != 1 || got[0] != "00-"+s.trace+"-"+span+"-01" {
		t.Errorf("upstream traceparents %q, want one naming the server span %s", got, span)
	}
}

// tags checks the span's tags: a value, or "*" for any non-empty one.
func tags(t *testing.T, sp jSpan, want map[string]string) {
	t.Helper()
	for k, w := range want {
		got, ok := sp.tag(k)
		switch {
		case !ok:
			t.Errorf("%s: no %s", sp.OperationName, k)
		case w == "*" && got == "":
			t.Errorf("%s: %s empty", sp.OperationName, k)
		case w != "*" && got != w:
			t.Errorf("%s: %s = %q, want %q", sp.OperationName, k, got, w)
		}
	}
}

// positive checks that the span's numeric tag k is above zero.
func positive(t *testing.T, sp jSpan, k string) {
	t.Helper()
	v, _ := sp.tag(k)
	if f, err := strconv.ParseFloat(v, 64); err != nil || f <= 0 {
		t.Errorf("%s: %s = %q, want > 0", sp.OperationName, k, v)
	}
}

// genAI: the server span's name and GenAI attributes, the attempt span under it, and the
// time to first token of a stream.
func genAI(t *testing.T, j *jaeger, s *sent) {
	tr := j.trace(t, s.trace)
	srv := serverSpan(t, tr)
	if srv.OperationName != "chat default" {
		t.Errorf("server span %q, want chat default", srv.OperationName)
	}
	target := "mock/text?len=0&say=" + say + "&chunk=4"
	tags(t, srv, map[string]string{"gen_ai.operation.name": "chat", "gen_ai.request.model": "default",
		"gen_ai.request.stream": "false", "gen_ai.request.max_tokens": "50", "gen_ai.request.temperature": "0.5",
		"gen_ai.request.top_p": "0.9", "gen_ai.provider.name": "*", "gen_ai.response.model": "*",
		"gen_ai.response.id": "*", "gen_ai.response.finish_reasons": "*", "http.response.status_code": "200",
		"sluice.target": target, "sluice.attempts": "1", "sluice.outcome": "none", "sluice.overhead": "*",
		"sluice.request.id": s.plain.header.Get("X-Request-Id"), "sluice.key.name": "tracer", "sluice.key.id": "*"})
	positive(t, srv, "gen_ai.usage.input_tokens")
	positive(t, srv, "gen_ai.usage.output_tokens")
	if _, ok := srv.tag("error.type"); ok {
		t.Errorf("a served request has error.type")
	}
	if ev := srv.events(); !contains(ev, "sluice.commit") {
		t.Errorf("server span events %v, want sluice.commit", ev)
	}
	att := children(tr, srv, "client")
	if len(att) != 1 {
		t.Fatalf("%d attempt spans, want 1", len(att))
	}
	if att[0].OperationName != "chat text?len=0&say="+say+"&chunk=4" {
		t.Errorf("attempt span %q, want chat <model>", att[0].OperationName)
	}
	tags(t, att[0], map[string]string{"sluice.target": target, "sluice.outcome": "none", "sluice.committed": "true",
		"gen_ai.operation.name": "chat"})
	positive(t, att[0], "gen_ai.response.time_to_first_chunk")

	st := serverSpan(t, j.trace(t, s.stream.traceID(t)))
	tags(t, st, map[string]string{"gen_ai.request.stream": "true", "sluice.outcome": "none"})
	positive(t, st, "sluice.time_to_first_token")
	positive(t, st, "gen_ai.usage.output_tokens")
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// fallback: a first target that fails and a second that serves are two attempt spans, the
// first with its outcome and the error status, and a fallback event on the server span.
func fallback(t *testing.T, j *jaeger, s *sent) {
	tr := j.trace(t, s.fall.traceID(t))
	srv := serverSpan(t, tr)
	tags(t, srv, map[string]string{"sluice.attempts": "2", "sluice.outcome": "none",
		"sluice.target": "mock/text?len=0&say=" + say})
	if ev := srv.events(); !contains(ev, "sluice.fallback") {
		t.Errorf("server span events %v, want sluice.fallback", ev)
	}
	att := children(tr, srv, "client")
	if len(att) != 2 {
		t.Fatalf("%d attempt spans, want 2", len(att))
	}
	first, second := att[0], att[1]
	if first.OperationName == second.OperationName {
		first, second = second, first // Jaeger's order is not the start order
	}
	if v, _ := first.tag("sluice.target"); v != "mock/text?fail=500&quote=all" {
		first, second = second, first
	}
	tags(t, first, map[string]string{"sluice.target": "mock/text?fail=500&quote=all", "sluice.committed": "false",
		"http.response.status_code": "500", "error.type": "*", "sluice.reason": "*", "otel.status_code": "ERROR"})
	if o, _ := first.tag("sluice.outcome"); o == "none" || o == "" {
		t.Errorf("failed attempt's outcome %q, want its error kind", o)
	}
	tags(t, second, map[string]string{"sluice.outcome": "none", "sluice.committed": "true"})
}

// toolSpans: each server-side tool invocation of the run is an execute_tool span under the
// request's server span, with its call id and outcome.
func toolSpans(t *testing.T, j *jaeger, s *sent) {
	tr := j.trace(t, s.run.traceID(t))
	srv := serverSpan(t, tr)
	if srv.OperationName != "chat agent" {
		t.Errorf("server span %q, want chat agent", srv.OperationName)
	}
	// What the model called: the configured tool (an MCP server's name for its tools), and
	// the outcome.
	want := map[string][2]string{"count_rows": {"count_rows", "ok"}, "progress": {"progress", "ok"},
		"broken": {"broken", "error"}, "docs__search": {"docs", "ok"}}
	got := map[string]bool{}
	for _, sp := range children(tr, srv, "internal") {
		name, _ := sp.tag("gen_ai.tool.name")
		if sp.OperationName != "execute_tool "+name {
			continue
		}
		got[name] = true
		tags(t, sp, map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "*",
			"sluice.tool": want[name][0], "sluice.outcome": want[name][1]})
	}
	for name := range want {
		if !got[name] {
			t.Errorf("no execute_tool %s span under the run's server span", name)
		}
	}
	if n := len(children(tr, srv, "client")); n != 2 {
		t.Errorf("%d attempt spans, want 2 (the tool round and the answer)", n)
		for _, sp := range tr.Spans {
			k, _ := sp.tag("span.kind")
			t.Logf("span %s %q kind %s parent %s tags %v", sp.SpanID, sp.OperationName, k, sp.parent(), sp.Tags)
		}
	}
}

// mcpTool: a tools/call through the MCP gateway is an execute_tool span under its request's
// server span, naming the caller's key (by name) and the server.
func mcpTool(t *testing.T, j *jaeger, s *sent) {
	tr := j.trace(t, s.mcpCall.traceID(t))
	srv := serverSpan(t, tr)
	spans := children(tr, srv, "internal")
	if len(spans) != 1 || spans[0].OperationName != "execute_tool docs__search" {
		t.Fatalf("spans under %s: %v, want one execute_tool docs__search", srv.OperationName, spans)
	}
	tags(t, spans[0], map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "docs__search",
		"sluice.tool": "docs", "sluice.outcome": "ok", "sluice.key.name": "tracer"})
}

// absent: no stored trace of service holds any of the strings, in any field of Jaeger's
// answer (span names, tags, events, the process's tags); without capture_content no span
// has the message attributes.
func absent(t *testing.T, j *jaeger, service string, strs []string, capture bool) {
	raw := j.raw(t, "/api/traces?limit=1000&lookback=1h&service="+service)
	for _, s := range strs {
		if strings.Contains(raw, s) {
			t.Errorf("the traces of %s hold %q", service, s)
		}
	}
	trs := j.traces(t, service, "")
	if len(trs) < 5 {
		t.Fatalf("%d traces of %s, want the five requests'", len(trs), service)
	}
	for _, tr := range trs {
		for _, sp := range tr.Spans {
			for _, k := range []string{"gen_ai.input.messages", "gen_ai.output.messages"} {
				if _, ok := sp.tag(k); ok && !capture {
					t.Errorf("%s has %s without capture_content", sp.OperationName, k)
				}
			}
		}
	}
}
