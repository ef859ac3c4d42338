package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
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
		{"bad role", `{"model":"a-echo","max_tokens":5,"messages":[{"role":"system","content":"hi"}]}`, 400, "invalid_request_error", "messages.0.role"},
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
