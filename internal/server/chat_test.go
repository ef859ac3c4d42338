package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestStreamText(t *testing.T) {
	g := newGateway(t, "")
	resp := g.post(t, chatBody("default", true, ""))
	if resp.StatusCode != 200 {
		t.Fatalf("got status %d, want 200", resp.StatusCode)
	}
	for k, want := range map[string]string{
		"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no",
		"X-Request-Id": "test", "X-Sluice-Target": "mock/echo", "X-Sluice-Attempts": "1",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("header %s: got %q, want %q", k, got, want)
		}
	}
	if resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("got Content-Encoding %q, want none on an event stream", resp.Header.Get("Content-Encoding"))
	}
	p := parse(t, frames(t, resp.Body))
	if p.text[0] != "Hello there, gateway." {
		t.Errorf("got text %q, want the echoed message", p.text[0])
	}
	if p.roles[0] != 1 || p.finish[0] != "stop" || !p.done || p.usage != nil {
		t.Errorf("got roles %d finish %q done %v usage %v, want one role chunk, stop, [DONE], no usage", p.roles[0], p.finish[0], p.done, p.usage)
	}
	if len(p.chunks) < 4 {
		t.Errorf("got %d chunks, want the text streamed in several", len(p.chunks))
	}
	if p.chunks[0].Model != "echo" {
		t.Errorf("got model %q, want the served model echo", p.chunks[0].Model)
	}
}

func TestStreamUsageOnlyWhenAsked(t *testing.T) {
	g := newGateway(t, "")
	p := parse(t, frames(t, g.post(t, chatBody("mock/text?len=40", true, `,"stream_options":{"include_usage":true}`)).Body))
	if p.usage == nil || p.usage.Usage.CompletionTokens == 0 || p.usage.Usage.TotalTokens == 0 {
		t.Fatalf("got usage %+v, want a usage chunk with tokens", p.usage)
	}
	if !strings.Contains(string(g.mock.LastRequest("text?len=40")), `"include_usage":true`) {
		t.Errorf("upstream request %s does not ask for usage", g.mock.LastRequest("text?len=40"))
	}
	p = parse(t, frames(t, g.post(t, chatBody("mock/text?len=40", true, "")).Body))
	if p.usage != nil {
		t.Errorf("got a usage chunk the client did not ask for")
	}
	if !strings.Contains(string(g.mock.LastRequest("text?len=40")), `"include_usage":true`) {
		t.Errorf("upstream request %s does not ask for usage although the client did not", g.mock.LastRequest("text?len=40"))
	}
}

func TestStreamToolCallsWhole(t *testing.T) {
	g := newGateway(t, "")
	p := parse(t, frames(t, g.post(t, chatBody("mock/tools?calls=2&split=1,5,9", true, "")).Body))
	calls := p.calls[0]
	if len(calls) != 2 {
		t.Fatalf("got %d tool-call deltas, want 2 (one per call, whole)", len(calls))
	}
	for i, c := range calls {
		var args struct{ Location string }
		if err := json.Unmarshal([]byte(c.Function.Arguments), &args); err != nil || args.Location == "" {
			t.Errorf("call %d: arguments %q do not parse whole: %v", i, c.Function.Arguments, err)
		}
		if c.Index != i || c.ID == "" || c.Type != "function" || c.Function.Name != "get_weather" {
			t.Errorf("call %d: got %+v, want index, id, type and name", i, c)
		}
	}
	if p.finish[0] != "tool_calls" || !p.done {
		t.Errorf("got finish %q done %v, want tool_calls and [DONE]", p.finish[0], p.done)
	}
}

func TestStreamReasoningSameField(t *testing.T) {
	g := newGateway(t, "")
	for _, field := range []string{"reasoning", "reasoning_content"} {
		t.Run(field, func(t *testing.T) {
			fs := frames(t, g.post(t, chatBody("mock/reason?think=30&len=20&field="+field, true, "")).Body)
			p := parse(t, fs)
			if len(p.reasoning[0]) != 30 || len(p.text[0]) != 20 {
				t.Errorf("got reasoning %q text %q, want 30 and 20 bytes", p.reasoning[0], p.text[0])
			}
			if !strings.Contains(strings.Join(fs, "\n"), `"`+field+`":`) {
				t.Errorf("reasoning did not come back in the field %q", field)
			}
		})
	}
}

func TestStreamRefusalAndLogprobs(t *testing.T) {
	g := newGateway(t, "")
	p := parse(t, frames(t, g.post(t, chatBody("mock/refuse", true, "")).Body))
	if p.refusal[0] != "I'm sorry, but I can't help with that." || p.text[0] != "" {
		t.Errorf("got refusal %q text %q, want the refusal only", p.refusal[0], p.text[0])
	}
	p = parse(t, frames(t, g.post(t, chatBody("mock/text?len=30&logprobs=1", true, `,"logprobs":true`)).Body))
	n := 0
	for _, c := range p.chunks {
		for _, ch := range c.Choices {
			if len(ch.Logprobs) > 0 && string(ch.Logprobs) != "null" {
				n++
			}
		}
	}
	if n == 0 {
		t.Errorf("no chunk carried logprobs")
	}
}

func TestStreamFailures(t *testing.T) {
	tests := []struct {
		name, model, code string
	}{
		{"error frame after text", "mock/text?len=40&fail=error&after=3", "upstream_error"},
		{"event error after text", "mock/text?len=40&fail=event&after=3", "upstream_error"},
		{"cut after text", "mock/text?len=40&fail=cut&after=3", "upstream_truncated"},
		{"no finish", "mock/text?len=40&end=nofinish", "upstream_truncated"},
		{"connection dropped", "mock/text?len=40&fail=abort&after=3", "upstream_truncated"},
	}
	g := newGateway(t, "")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := g.post(t, chatBody(tt.model, true, ""))
			if resp.StatusCode != 200 {
				t.Fatalf("got status %d, want 200 (the answer had started)", resp.StatusCode)
			}
			p := parse(t, frames(t, resp.Body))
			if p.err == nil || p.done {
				t.Fatalf("got error %v done %v, want an error frame and no [DONE]", p.err, p.done)
			}
			if p.err.Error.Code != tt.code || !strings.Contains(p.err.Error.Message, "mock/"+strings.TrimPrefix(tt.model, "mock/")) {
				t.Errorf("got error %+v, want code %s and the target named", p.err.Error, tt.code)
			}
			if p.text[0] == "" {
				t.Errorf("got no text before the error")
			}
		})
	}
}

func TestStreamEndWithoutDoneIsComplete(t *testing.T) {
	g := newGateway(t, "")
	p := parse(t, frames(t, g.post(t, chatBody("mock/text?len=40&end=nodone", true, "")).Body))
	if !p.done || p.err != nil || len(p.text[0]) != 40 {
		t.Errorf("got done %v err %v text %d bytes, want a whole answer", p.done, p.err, len(p.text[0]))
	}
}

func TestErrorsBeforeFirstByte(t *testing.T) {
	tests := []struct {
		name, body string
		status     int
		code, msg  string
		retryAfter string
		noRetry    bool
	}{
		{"malformed", `{"model":`, 400, "", "could not parse", "", false},
		{"missing messages", `{"model":"default"}`, 400, "", "'messages'", "", false},
		{"unknown model", chatBody("nope", true, ""), 404, "model_not_found", "nope", "", false},
		{"unknown provider", chatBody("other/x", false, ""), 404, "model_not_found", "other/x", "", false},
		{"upstream 400", chatBody("mock/text?fail=400&msg=bad+thing", true, ""), 400, "", "bad thing", "", false},
		{"upstream 422", chatBody("mock/text?fail=422", false, ""), 422, "", "", "", false},
		{"upstream 401", chatBody("mock/text?fail=401", true, ""), 502, "all_targets_failed", "credentials", "", true},
		{"upstream 429", chatBody("mock/text?fail=429&retry=7", true, ""), 429, "rate_limit_exceeded", "", "7", true},
		{"upstream 500", chatBody("mock/text?fail=500", true, ""), 502, "all_targets_failed", "mock/text?fail=500: 500", "", true},
		{"error frame before text", chatBody("mock/text?fail=error", true, ""), 502, "all_targets_failed", "", "", true},
		{"non-stream failure after text", chatBody("mock/text?len=40&fail=error&after=3", false, ""), 502, "all_targets_failed", "", "", true},
	}
	g := newGateway(t, "")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := g.post(t, tt.body)
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("got status %d (%s), want %d", resp.StatusCode, b, tt.status)
			}
			var e struct {
				Error struct {
					Message string  `json:"message"`
					Type    string  `json:"type"`
					Code    *string `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(b, &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
				t.Fatalf("got body %s, want an OpenAI error body", b)
			}
			if tt.code != "" && (e.Error.Code == nil || *e.Error.Code != tt.code) {
				t.Errorf("got code %v, want %s", e.Error.Code, tt.code)
			}
			if !strings.Contains(e.Error.Message, tt.msg) {
				t.Errorf("got message %q, want it to contain %q", e.Error.Message, tt.msg)
			}
			if got := resp.Header.Get("Retry-After"); got != tt.retryAfter {
				t.Errorf("got Retry-After %q, want %q", got, tt.retryAfter)
			}
			if got := resp.Header.Get("X-Should-Retry") == "false"; got != tt.noRetry {
				t.Errorf("got x-should-retry false %v, want %v", got, tt.noRetry)
			}
			if strings.Contains(string(b), "Bearer") || strings.Contains(string(b), "sk-") {
				t.Errorf("error body %s carries a credential", b)
			}
		})
	}
}

func TestBodyTooLarge(t *testing.T) {
	g := newGateway(t, baseConfig+"limits: {max_body_bytes: 1000}\n")
	resp := g.post(t, chatBody("default", false, `,"user":"`+strings.Repeat("x", 2000)+`"`))
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("got status %d, want 413", resp.StatusCode)
	}
}

func TestNonStreamed(t *testing.T) {
	g := newGateway(t, "")
	resp := g.post(t, chatBody("mock/tools?say=Checking.&calls=2", false, `,"stream_options":null`))
	b, _ := io.ReadAll(resp.Body)
	var c struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Role      string          `json:"role"`
				Content   *string         `json:"content"`
				ToolCalls []toolCallDelta `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			TotalTokens int `json:"total_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(b, &c); err != nil || resp.StatusCode != 200 {
		t.Fatalf("got %d %s, want a chat.completion", resp.StatusCode, b)
	}
	if c.Object != "chat.completion" || c.ID != "chatcmpl-test" || len(c.Choices) != 1 {
		t.Fatalf("got %s, want one choice of a chat.completion", b)
	}
	m := c.Choices[0].Message
	if m.Role != "assistant" || m.Content == nil || *m.Content != "Checking." || len(m.ToolCalls) != 2 || c.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("got %s, want the text, two tool calls and tool_calls", b)
	}
	if !json.Valid([]byte(m.ToolCalls[1].Function.Arguments)) || c.Usage.TotalTokens == 0 {
		t.Errorf("got %s, want whole arguments and usage", b)
	}
}

func TestExtraFieldsPassThrough(t *testing.T) {
	g := newGateway(t, "")
	resp := g.post(t, chatBody("mock/echo", false, `,"parallel_tool_calls":false,"metadata":{"k":"v"},"max_completion_tokens":9`))
	io.Copy(io.Discard, resp.Body)
	got := string(g.mock.LastRequest("echo"))
	for _, want := range []string{`"parallel_tool_calls":false`, `"metadata":{"k":"v"}`, `"max_completion_tokens":9`, `"stream":true`} {
		if !strings.Contains(got, want) {
			t.Errorf("upstream request %s lacks %s", got, want)
		}
	}
}

func TestClientDisconnectCancelsUpstream(t *testing.T) {
	g := newGateway(t, "")
	ctx, cancel := ctxWithCancel(t)
	req, _ := http.NewRequestWithContext(ctx, "POST", g.url+"/v1/chat/completions",
		strings.NewReader(chatBody("mock/text?len=2000&delay=20ms", true, "")))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for g.mock.Canceled() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the upstream request was not canceled after the client left")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestModels(t *testing.T) {
	g := newGateway(t, baseConfig+"  fast: [mock/text]\n")
	resp, err := http.Get(g.url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l struct {
		Object string `json:"object"`
		Data   []struct {
			ID     string `json:"id"`
			Object string `json:"object"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range l.Data {
		ids = append(ids, d.ID)
	}
	if l.Object != "list" || strings.Join(ids, ",") != "default,fast,mock/echo,mock/text" {
		t.Errorf("got %s %v, want list of default,fast,mock/echo,mock/text", l.Object, ids)
	}
}

func TestHealth(t *testing.T) {
	g := newGateway(t, "")
	for _, p := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(g.url + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: got %d, want 200", p, resp.StatusCode)
		}
	}
	resp, err := http.Get(g.url + "/v1/nothing")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(b), `"error"`) {
		t.Errorf("got %d %s, want a 404 OpenAI error", resp.StatusCode, b)
	}
}

func TestAliasPolicies(t *testing.T) {
	g := newGateway(t, baseConfig+`  private:
    targets: [mock/echo]
    redact_input: true
  thinker:
    targets: ["mock/text?say=%3Cthink%3Eplan%3C%2Fthink%3EAnswer.&chunk=2"]
    think_filter: true
`)
	key := "sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7"
	resp := g.post(t, `{"model":"private","messages":[{"role":"user","content":"my key is `+key+` ok"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"store","arguments":"{\"key\":\"`+key+`\"}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"stored"},{"role":"user","content":"thanks"}]}`)
	b, _ := io.ReadAll(resp.Body)
	if up := string(g.mock.LastRequest("echo")); strings.Contains(up, key) || !strings.Contains(up, "[REDACTED:openai_key]") {
		t.Errorf("the provider saw %s, want the key masked before it left", up)
	}
	if strings.Contains(string(b), key) {
		t.Errorf("the client got the key back: %s", b)
	}
	var up struct {
		Messages []struct {
			ToolCalls []struct {
				Function struct{ Arguments string } `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(g.mock.LastRequest("echo"), &up); err != nil || len(up.Messages) < 2 || len(up.Messages[1].ToolCalls) != 1 {
		t.Fatalf("got upstream request %s (%v), want the assistant's tool call", g.mock.LastRequest("echo"), err)
	}
	if args := up.Messages[1].ToolCalls[0].Function.Arguments; args != `{"key":"[REDACTED:openai_key]"}` {
		t.Errorf("got arguments %s upstream, want the key masked inside valid JSON", args)
	}
	p := parse(t, frames(t, g.post(t, chatBody("thinker", true, "")).Body))
	if p.text[0] != "Answer." || p.reasoning[0] != "plan" {
		t.Errorf("got text %q reasoning %q, want the think span moved to reasoning", p.text[0], p.reasoning[0])
	}
}
