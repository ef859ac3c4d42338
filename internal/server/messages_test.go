package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
)

// messagesGateway serves the Messages API's aliases from the mock.
func messagesGateway(t *testing.T) *gateway {
	return anthropicMock(t, `
  a-text: ["anth/text?len=40"]
  c-text: ["mock/text?len=40"]
  a-tools: ["anth/tools?calls=2"]
  c-tools: ["mock/tools?calls=2"]
  a-think: ["anth/reason?think=30&len=20"]
  a-cut: ["anth/text?len=40&fail=error&after=6"]
  a-echo: [anth/echo]
  overloaded: ["anth/echo?fail=529", "anth/text?fail=529"]
  a-then-c: ["anth/echo?fail=529", mock/echo]
  c-echo: [mock/echo]
  claude-*: [mock/echo]
  a-redact: {targets: [anth/echo], redact_input: true}
  claude-haiku-*: ["anth/echo"]
`)
}

func messagesBody(model string, stream bool, extra string) string {
	s := `{"model":` + quote(model) + `,"max_tokens":1024,"messages":[{"role":"user","content":"Hello there, gateway."}]`
	if stream {
		s += `,"stream":true`
	}
	return s + extra + "}"
}

func postMessages(t *testing.T, g *gateway, body string) (*http.Response, string) {
	t.Helper()
	resp := postTo(t, g.url, "/v1/messages", body)
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestMessagesStreamGolden: the stream a Messages client gets, byte for byte, from an
// Anthropic and from a Chat upstream: text, tool calls (each released whole, its input in
// one input_json_delta), thinking with its signature, and a failure after commit (an error
// event, no message_stop, no second message_start).
func TestMessagesStreamGolden(t *testing.T) {
	g := messagesGateway(t)
	for _, model := range []string{"a-text", "c-text", "a-tools", "c-tools", "a-think", "a-cut"} {
		t.Run(model, func(t *testing.T) {
			resp, body := postMessages(t, g, messagesBody(model, true, ""))
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("Request-Id") != "test" {
				t.Fatalf("got %d %v, want a 200 event stream with request-id", resp.StatusCode, resp.Header)
			}
			if n := strings.Count(body, "event: message_start\n"); n != 1 {
				t.Errorf("%d message_start events, want 1", n)
			}
			golden(t, "messages-"+model+".sse", []byte(body))
		})
	}
}

// TestMessagesOnce: the non-streamed Message of each kind of upstream.
func TestMessagesOnce(t *testing.T) {
	g := messagesGateway(t)
	for _, model := range []string{"a-text", "c-tools", "a-think"} {
		t.Run(model, func(t *testing.T) {
			resp, body := postMessages(t, g, messagesBody(model, false, ""))
			if resp.StatusCode != 200 || resp.Header.Get("Request-Id") != "test" {
				t.Fatalf("got %d %s", resp.StatusCode, body)
			}
			golden(t, "messages-"+model+".json", []byte(body))
		})
	}
}

// TestMessagesNative: an Anthropic target gets the client's body as it came (cache_control,
// the thinking block's signature, a server tool, an unknown member), with the target's model
// and stream: true; a Chat target cannot carry the server tool, so an alias with none of
// Anthropic is a 400 unsupported_by_targets.
func TestMessagesNative(t *testing.T) {
	g := messagesGateway(t)
	body := `{"model":"a-echo","max_tokens":2048,"system":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral","ttl":"1h"}}],` +
		`"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"Hm <x> & y","signature":"c2ln+/=="},{"type":"text","text":"Hello"}]},` +
		`{"role":"user","content":[{"type":"text","text":"say hi","cache_control":{"type":"ephemeral"}}]}],` +
		`"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":3}],"thinking":{"type":"enabled","budget_tokens":1024},"future_member":{"a":1}}`
	resp, out := postMessages(t, g, body)
	if resp.StatusCode != 200 || !strings.Contains(out, `"text":"say hi"`) {
		t.Fatalf("got %d %s", resp.StatusCode, out)
	}
	var got, want map[string]json.RawMessage
	json.Unmarshal(g.mock.LastRequest("echo"), &got)
	json.Unmarshal([]byte(body), &want)
	want["model"], want["stream"] = json.RawMessage(`"echo"`), json.RawMessage(`true`)
	for k, v := range want {
		if string(got[k]) != string(v) {
			t.Errorf("%s: upstream got %s, want %s", k, got[k], v)
		}
	}
	body = strings.Replace(body, `"a-echo"`, `"c-echo"`, 1)
	resp, out = postMessages(t, g, body)
	if resp.StatusCode != 400 || !strings.Contains(out, `"type":"invalid_request_error"`) || !strings.Contains(out, "server tool web_search_20250305") {
		t.Errorf("chat-only alias: got %d %s, want 400 naming the server tool", resp.StatusCode, out)
	}
}

// TestMessagesFallbackToChat: an overloaded Anthropic target falls back to a Chat one,
// which gets the conversation translated, without the thinking blocks it cannot check.
func TestMessagesFallbackToChat(t *testing.T) {
	g := messagesGateway(t)
	body := `{"model":"a-then-c","max_tokens":100,"messages":[{"role":"user","content":"hi"},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"secret thoughts","signature":"c2ln"},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"file.txt","is_error":true},{"type":"text","text":"and now?"}]}],` +
		`"tools":[{"name":"Bash","description":"run","input_schema":{"type":"object"}}],"tool_choice":{"type":"auto","disable_parallel_tool_use":true}}`
	resp, out := postMessages(t, g, body)
	if resp.StatusCode != 200 || resp.Header.Get("X-Sluice-Target") != "mock/echo" || !strings.Contains(out, `"text":"and now?"`) {
		t.Fatalf("got %d %s %v", resp.StatusCode, out, resp.Header)
	}
	up := string(g.mock.LastRequest("echo"))
	for _, want := range []string{`"tool_call_id":"toolu_1"`, `"parallel_tool_calls":false`, `"tool_choice":"auto"`, `"name":"Bash"`} {
		if !strings.Contains(up, want) {
			t.Errorf("chat upstream got %s, want %s in it", up, want)
		}
	}
	if strings.Contains(up, "secret thoughts") {
		t.Errorf("chat upstream got the thinking block: %s", up)
	}
}

// TestMessagesErrors: errors before the first byte are Anthropic's, with its statuses and
// a request-id header.
func TestMessagesErrors(t *testing.T) {
	g := messagesGateway(t)
	tests := []struct {
		name, body string
		status     int
		typ, msg   string
	}{
		{"no max_tokens", `{"model":"a-echo","messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "max_tokens: Field required"},
		{"bad json", `{"model":`, 400, "invalid_request_error", "could not parse"},
		{"bad role", `{"model":"a-echo","max_tokens":5,"messages":[{"role":"developer","content":"hi"}]}`, 400, "invalid_request_error", "messages.0.role"},
		{"budget over max", `{"model":"a-echo","max_tokens":1024,"thinking":{"type":"enabled","budget_tokens":2000},"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "budget_tokens"},
		{"unknown model", messagesBody("nope", false, ""), 404, "not_found_error", "nope"},
		{"overloaded", messagesBody("overloaded", true, ""), 529, "overloaded_error", "all targets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := postMessages(t, g, tt.body)
			var e struct {
				Type  string `json:"type"`
				Error struct{ Type, Message string }
			}
			json.Unmarshal([]byte(body), &e)
			if resp.StatusCode != tt.status || e.Type != "error" || e.Error.Type != tt.typ || !strings.Contains(e.Error.Message, tt.msg) || resp.Header.Get("Request-Id") != "test" {
				t.Errorf("got %d %s %v, want %d %s saying %q", resp.StatusCode, body, resp.Header, tt.status, tt.typ, tt.msg)
			}
		})
	}
	resp := postTo(t, g.url, "/v1/messages/nothing", "{}")
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 404 || !strings.Contains(string(b), `"type":"not_found_error"`) {
		t.Errorf("unknown route: got %d %s", resp.StatusCode, b)
	}
}

// TestCountTokensEstimate: without an Anthropic target (the mock has no count_tokens), the
// gateway estimates and says so.
func TestCountTokensEstimate(t *testing.T) {
	g := messagesGateway(t)
	resp := postTo(t, g.url, "/v1/messages/count_tokens", `{"model":"c-echo","messages":[{"role":"user","content":"`+strings.Repeat("word ", 100)+`"}]}`)
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		InputTokens int `json:"input_tokens"`
	}
	if json.Unmarshal(b, &out) != nil || resp.StatusCode != 200 || resp.Header.Get("X-Sluice-Token-Count") != "estimated" || out.InputTokens < 100 || out.InputTokens > 200 {
		t.Errorf("got %d %s %v, want an estimate of about 125", resp.StatusCode, b, resp.Header)
	}
}

// TestMessagesPatternAlias: Claude Code's concrete model ids route through the most specific
// pattern alias they match; /v1/models lists the patterns.
func TestMessagesPatternAlias(t *testing.T) {
	g := messagesGateway(t)
	for model, target := range map[string]string{"claude-sonnet-4-5-20250929": "mock/echo", "claude-haiku-4-5-20251001": "anth/echo"} {
		resp, body := postMessages(t, g, messagesBody(model, false, ""))
		if resp.StatusCode != 200 || resp.Header.Get("X-Sluice-Target") != target {
			t.Errorf("%s: got %d %s from %q, want %s", model, resp.StatusCode, body, resp.Header.Get("X-Sluice-Target"), target)
		}
	}
	resp, err := http.Get(g.url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"id":"claude-*"`) || !strings.Contains(string(b), `"id":"claude-haiku-*"`) {
		t.Errorf("/v1/models: got %s, want the patterns", b)
	}
}

// TestMessagesOpenAPI: the Messages answers, count_tokens and errors are what
// api/openapi.yaml declares.
func TestMessagesOpenAPI(t *testing.T) {
	g := messagesGateway(t)
	sc := newSpecCheck(t, g)
	for _, model := range []string{"a-think", "c-tools", "a-text"} {
		sc.call(t, "POST", "/v1/messages", "", messagesBody(model, false, ""), 200)
	}
	sc.call(t, "POST", "/v1/messages", "", messagesBody("a-text", true, ""), 200)
	sc.call(t, "POST", "/v1/messages/count_tokens", "", `{"model":"c-echo","messages":[{"role":"user","content":"hi"}]}`, 200)
	sc.call(t, "POST", "/v1/messages", "", messagesBody("overloaded", false, ""), 529)
	sc.call(t, "POST", "/v1/messages", "", messagesBody("nope", false, ""), 404)
	x := sc.do(t, "POST", "/v1/messages", `{"model":"a-echo","messages":[{"role":"user","content":"hi"}]}`)
	sc.response(t, x)
}

// TestCountTokensAnthropic: an alias with an Anthropic target asks it (its count_tokens, with
// the client's body), after a Chat target, which cannot count.
func TestCountTokensAnthropic(t *testing.T) {
	g := anthropicMock(t, `
  counted: [mock/echo, anth/echo]
`)
	body := `{"model":"counted","system":"` + strings.Repeat("s", 40) + `","messages":[{"role":"user","content":"` + strings.Repeat("u", 60) + `"}],"tools":[{"type":"web_search_20250305","name":"web_search"}]}`
	resp := postTo(t, g.url, "/v1/messages/count_tokens", body)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(b) != `{"input_tokens":25}` || resp.Header.Get("X-Sluice-Token-Count") != "" || resp.Header.Get("X-Sluice-Target") != "anth/echo" {
		t.Errorf("got %d %s %v, want the mock's count of 100 bytes", resp.StatusCode, b, resp.Header)
	}
	var up map[string]json.RawMessage
	json.Unmarshal(g.mock.LastRequest("echo"), &up)
	if string(up["model"]) != `"echo"` || string(up["tools"]) != `[{"type":"web_search_20250305","name":"web_search"}]` {
		t.Errorf("upstream got %s", g.mock.LastRequest("echo"))
	}
}

// TestMessagesFaults is the fault matrix of the fallback chain on /v1/messages: a failure
// before commit (an error event before content, a rate limit after message_start, a cut, a
// stall, a refused connection) falls back to the next target, Anthropic or Chat, and the
// client sees one clean stream with one message_start; text then an error is an error
// event after commit.
func TestMessagesFaults(t *testing.T) {
	faults := []string{"anth/text?fail=error", "anth/text?fail=ratelimit", "anth/text?fail=cut", "anth/text?fail=stall", "dead/x", "mock/text?fail=error"}
	for _, a := range faults {
		for _, b := range []string{"anth/text?len=40", "mock/text?len=40"} {
			t.Run(a+"|"+b, func(t *testing.T) {
				g := newFallbackGatewayWith(t, a, b, "{first_event: 750ms, idle: 750ms}")
				resp := postTo(t, g.url, "/v1/messages", messagesBody("pair", true, ""))
				out, _ := io.ReadAll(resp.Body)
				body := string(out)
				if resp.StatusCode != 200 || strings.Count(body, "event: message_start\n") != 1 || !strings.HasSuffix(body, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n") ||
					strings.Contains(body, "event: error") || strings.Count(body, "text_delta") == 0 {
					t.Fatalf("got %d %s, want one clean stream", resp.StatusCode, body)
				}
				if got := resp.Trailer.Get("X-Sluice-Target") + resp.Header.Get("X-Sluice-Target"); got != b {
					t.Errorf("served by %q, want %s", got, b)
				}
			})
		}
	}
	g := newFallbackGateway(t, "anth/text?len=80&fail=error&after=6", "mock/text?len=40")
	resp := postTo(t, g.url, "/v1/messages", messagesBody("pair", true, ""))
	out, _ := io.ReadAll(resp.Body)
	if body := string(out); !strings.Contains(body, "text_delta") || !strings.HasSuffix(body, "\n\n") || !strings.Contains(body, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"") ||
		strings.Contains(body, "message_stop") || strings.Count(body, "event: message_start\n") != 1 {
		t.Errorf("text then error: got %s, want text, then the error event, no message_stop", body)
	}
}

// TestMessagesRedactInput: with redact_input, the body an Anthropic target gets as it came is
// masked too, and still parses.
func TestMessagesRedactInput(t *testing.T) {
	g := messagesGateway(t)
	const secret = "sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7"
	resp, out := postMessages(t, g, `{"model":"a-redact","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"my key is `+secret+` ok","cache_control":{"type":"ephemeral"}}]}]}`)
	up := g.mock.LastRequest("echo")
	if resp.StatusCode != 200 || strings.Contains(out, secret) || strings.Contains(string(up), secret) || !json.Valid(up) ||
		!strings.Contains(string(up), `"cache_control":{"type":"ephemeral"}`) || !strings.Contains(string(up), "[REDACTED:") {
		t.Errorf("got %d %s; upstream got %s", resp.StatusCode, out, up)
	}
}

// TestMessagesKeys: the key comes in x-api-key or as a Bearer token, may name a pattern, and
// the gate's refusals (no key, a model the key may not use, a max_tokens over the key's
// tokens per minute, read from the Messages body) are Anthropic's errors.
func TestMessagesKeys(t *testing.T) {
	const good = "sk-sluice-messages-key-0123456789"
	url := serveGate(t, simConfig+"  claude-*: [sim/echo]\nkeys: [{name: k, hash: "+auth.Hash(good)+", models: [claude-*], limits: {tpm: 3000}}]\n", nil, time.Minute, nil)
	send := func(body string, header ...string) (int, string, http.Header) {
		req, _ := http.NewRequest("POST", url+"/v1/messages", strings.NewReader(body))
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	body := messagesBody("claude-sonnet-4-5-20250929", false, "")
	for _, h := range [][]string{{"X-Api-Key", good}, {"Authorization", "Bearer " + good}} {
		if status, out, _ := send(body, h...); status != 200 || !strings.Contains(out, `"type":"message"`) {
			t.Errorf("%s: got %d %s", h[0], status, out)
		}
	}
	tests := []struct {
		name, body string
		header     []string
		status     int
		typ        string
	}{
		{"no key", body, nil, 401, "authentication_error"},
		{"wrong key", body, []string{"X-Api-Key", "sk-nope"}, 401, "authentication_error"},
		{"model not allowed", messagesBody("default", false, ""), []string{"X-Api-Key", good}, 403, "permission_error"},
		{"over tpm", strings.Replace(body, `"max_tokens":1024`, `"max_tokens":5000`, 1), []string{"X-Api-Key", good}, 429, "rate_limit_error"},
	}
	for _, tt := range tests {
		status, out, h := send(tt.body, tt.header...)
		if status != tt.status || !strings.HasPrefix(out, `{"type":"error","error":{"type":"`+tt.typ+`"`) || h.Get("Request-Id") == "" {
			t.Errorf("%s: got %d %s %v, want %d %s", tt.name, status, out, h, tt.status, tt.typ)
		}
	}
}

// TestMessagesHeartbeat: while the chain holds back, the keepalive is Anthropic's ping
// event; a chain that fails after one sent the headers ends with the error event alone.
func TestMessagesHeartbeat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := simGateway(t, "  slow: [\"sim/text?first=25s&len=20\"]\n  doomed: [\"sim/text?wait=15s&fail=500\"]\n")
		serveMessages := func(model string) string {
			rec := &recorder{h: http.Header{}}
			s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/messages", strings.NewReader(messagesBody(model, true, ""))))
			return rec.body.String()
		}
		const ping = "event: ping\ndata: {\"type\":\"ping\"}\n\n"
		body := serveMessages("slow")
		if !strings.HasPrefix(body, ping+ping+"event: message_start\n") || !strings.HasSuffix(body, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n") || strings.Contains(body, ": keepalive") {
			t.Errorf("got %q, want two pings, then the whole stream", body)
		}
		body = serveMessages("doomed")
		if !strings.HasPrefix(body, ping+"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\"") || strings.Contains(body, "message_start") {
			t.Errorf("got %q, want a ping, then the error event alone", body)
		}
	})
}

// TestMessagesGuardrails: on /v1/messages a hold guardrail's refusal is Anthropic's 422
// error and no byte of the answer, streamed or not; an input guardrail's block is a 400;
// a stream guardrail lets the text through and ends the stream with the error event.
func TestMessagesGuardrails(t *testing.T) {
	g := newGateway(t, guardConfig)
	refused := `{"type":"error","error":{"type":"invalid_request_error","message":"The answer was refused by guardrail 'terms-out': the answer contains a blocked term."}}`
	for _, stream := range []bool{true, false} {
		r := post(t, g.url, "/v1/messages", strings.Replace(messagesBody("held", stream, ""), "Hello there, gateway.", "the Condor flies at dawn", 1))
		if r.status != 422 || string(r.body) != refused {
			t.Errorf("held, stream %v: got %d %s, want 422 %s", stream, r.status, r.body, refused)
		}
	}
	r := post(t, g.url, "/v1/messages", strings.Replace(messagesBody("blocked", true, ""), "Hello there, gateway.", "topsecret plans", 1))
	if r.status != 400 || !strings.HasPrefix(string(r.body), `{"type":"error","error":{"type":"invalid_request_error","message":"`) {
		t.Errorf("blocked: got %d %s", r.status, r.body)
	}
	r = post(t, g.url, "/v1/messages", strings.Replace(messagesBody("live", true, ""), "Hello there, gateway.", "the Condor flies at dawn", 1))
	if body := string(r.body); r.status != 200 || !strings.Contains(body, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"The answer was refused") ||
		strings.Contains(body, "message_stop") || !strings.Contains(body, `"text":"Condor "`) {
		t.Errorf("live: got %d %s, want the text as it came, then the error event and the end", r.status, body)
	}
}
