package server_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/mockllm"
)

// fallbackGateway is a gateway whose alias "pair" is [a, b]. Three providers: mock (the
// recorded fixtures of the OpenAI adapter), trim (the fixtures of testdata/, trimmed) and
// dead (a closed port: connection refused). Timeouts are short: real sockets, tens of ms.
type fallbackGateway struct {
	url        string
	mock, trim *mockllm.Server
	// close stops the gateway once its handlers have returned.
	close func()
}

func newFallbackGateway(t *testing.T, a, b string) *fallbackGateway {
	t.Helper()
	return newFallbackGatewayWith(t, a, b, "{first_event: 750ms, idle: 750ms}")
}

func newFallbackGatewayWith(t *testing.T, a, b, timeouts string) *fallbackGateway {
	t.Helper()
	mock := mockllm.New(mockllm.Options{FixturesDir: "../provider/openai/testdata"})
	trim := mockllm.New(mockllm.Options{FixturesDir: "testdata"})
	ms, ts := httptest.NewServer(mock), httptest.NewServer(trim)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()
	yaml := `
providers:
  mock: {kind: openai-compatible, base_url: "${MOCK_URL}/v1"}
  anth: {kind: anthropic, base_url: "${MOCK_URL}", api_key: sk-ant-test}
  goog: {kind: gemini, base_url: "${MOCK_URL}/v1beta", api_key: AIza-test}
  trim: {kind: openai-compatible, base_url: "${TRIM_URL}/v1"}
  dead: {kind: openai-compatible, base_url: "${DEAD_URL}/v1"}
models:
  pair:
    targets: [` + quote(a) + `, ` + quote(b) + `]
    timeouts: ` + timeouts + `
`
	gs := serveConfig(t, yaml, map[string]string{"MOCK_URL": ms.URL, "TRIM_URL": ts.URL, "DEAD_URL": dead})
	t.Cleanup(func() {
		gs.Close()
		ms.Close()
		ts.Close()
	})
	return &fallbackGateway{url: gs.URL, mock: mock, trim: trim, close: gs.Close}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func (g *fallbackGateway) post(t *testing.T, body string) *http.Response {
	t.Helper()
	return (&gateway{url: g.url}).post(t, body)
}

// calls is how often the upstream of target was called; -1 for dead targets.
func (g *fallbackGateway) calls(target string) int {
	p, m, _ := strings.Cut(target, "/")
	switch p {
	case "mock", "anth":
		return g.mock.Calls(m)
	case "trim":
		return g.trim.Calls(m)
	}
	return -1
}

// outcome is what a client gets.
type outcome struct {
	status int
	served string // X-Sluice-Target; "" when none
	code   string // the error code: of the body, or of the in-band frame of a 200 stream
	// text is the answer's text; for an in-band error, the text before it.
	text       string
	retryAfter string
	attempts   string
}

const echoText = "Hello there, gateway."

func TestFallbackScenarios(t *testing.T) {
	type want struct {
		outcome
		aCalls, bCalls int
	}
	const b = "mock/echo"
	tests := []struct {
		name   string
		a, b   string
		stream want
		once   want // a non-streamed client
		msg    []string
	}{
		{name: "429 then second serves", a: "mock/text?fail=429",
			stream: want{outcome{200, b, "", echoText, "", "2"}, 1, 1}},
		{name: "500 then second serves", a: "mock/text?fail=500",
			stream: want{outcome{200, b, "", echoText, "", "2"}, 1, 1}},
		{name: "connection refused", a: "dead/x",
			stream: want{outcome{200, b, "", echoText, "", "2"}, -1, 1}},
		{name: "error frame before text", a: "mock/text?fail=error",
			stream: want{outcome{200, b, "", echoText, "", "2"}, 1, 1}},
		{name: "role chunk then rate_limit_exceeded", a: "mock/text?fail=ratelimit",
			stream: want{outcome{200, b, "", echoText, "", "2"}, 1, 1}},
		{name: "401 then second serves", a: "mock/text?fail=401",
			stream: want{outcome{200, b, "", echoText, "", "2"}, 1, 1}},
		{name: "stalled first event", a: "mock/text?fail=stall",
			stream: want{outcome{200, b, "", echoText, "", "2"}, 1, 1}},
		{name: "text then error", a: "mock/text?len=40&fail=error&after=3",
			stream: want{outcome{200, "mock/text?len=40&fail=error&after=3", "upstream_error", "*", "", "1"}, 1, 0},
			once:   want{outcome{200, b, "", echoText, "", "2"}, 1, 1}},
		{name: "idle stall after text", a: "mock/text?len=40&fail=stall&after=3",
			stream: want{outcome{200, "mock/text?len=40&fail=stall&after=3", "upstream_timeout", "*", "", "1"}, 1, 0},
			once:   want{outcome{200, b, "", echoText, "", "2"}, 1, 1}},
		{name: "cut after text", a: "mock/text?len=40&fail=cut&after=3",
			stream: want{outcome{200, "mock/text?len=40&fail=cut&after=3", "upstream_truncated", "*", "", "1"}, 1, 0},
			once:   want{outcome{200, b, "", echoText, "", "2"}, 1, 1}},
		{name: "empty answer commits", a: "mock/empty",
			stream: want{outcome{200, "mock/empty", "", "", "", "1"}, 1, 0}},
		{name: "400 returned as is", a: "mock/text?fail=400&msg=bad+thing",
			stream: want{outcome{400, "", "", "", "", "1"}, 1, 0}, msg: []string{"bad thing"}},
		{name: "all fail", a: "mock/text?fail=500", b: "mock/text?fail=error",
			stream: want{outcome{502, "", "all_targets_failed", "", "", "2"}, 1, 1},
			msg:    []string{"all targets of 'pair' failed", "mock/text?fail=500: 500", "mock/text?fail=error: "}},
		{name: "all rate limited", a: "mock/text?fail=429&retry=3", b: "mock/echo?fail=429&retry=5",
			stream: want{outcome{429, "", "rate_limit_exceeded", "", "3", "2"}, 1, 1}},
		{name: "recorded error after text", a: "mock/replay?file=openai-chat-instream-server-error.sse",
			stream: want{outcome{200, "mock/replay?file=openai-chat-instream-server-error.sse", "upstream_error", "Partial ", "", "1"}, 1, 0},
			once:   want{outcome{200, b, "", echoText, "", "2"}, 1, 1}},
		{name: "recorded Groq error after reasoning", a: "mock/replay?file=groq-chat-instream-error.sse",
			stream: want{outcome{200, "mock/replay?file=groq-chat-instream-error.sse", "upstream_error", "", "", "1"}, 1, 0},
			once:   want{outcome{200, b, "", echoText, "", "2"}, 1, 1}},
		{name: "recorded error, healthy events removed", a: "trim/replay?file=openai-chat-instream-server-error.trimmed.sse",
			stream: want{outcome{200, b, "", echoText, "", "2"}, 1, 1}},
		{name: "recorded Groq error, healthy events removed", a: "trim/replay?file=groq-chat-instream-error.trimmed.sse",
			stream: want{outcome{200, b, "", echoText, "", "2"}, 1, 1}},
	}
	for _, tt := range tests {
		if tt.b == "" {
			tt.b = b
		}
		if tt.once.status == 0 {
			tt.once = tt.stream
		}
		// Each scenario also runs with an Anthropic first target: the mock speaks its wire with
		// the same fault scripts, and the client must see the same outcome.
		for _, first := range []string{"mock", "anth"} {
			a := tt.a
			if first == "anth" {
				if !strings.HasPrefix(a, "mock/") || strings.Contains(a, "replay") {
					continue // OpenAI recordings and other providers have no Anthropic twin
				}
				// The Anthropic body opens with content_block_start and ping: the same text
				// comes two frames later.
				a = "anth/" + strings.Replace(strings.TrimPrefix(a, "mock/"), "after=3", "after=5", 1)
			}
			for _, stream := range []bool{true, false} {
				w := tt.once
				name := first + "/" + tt.name + "/non-streamed"
				if stream {
					w, name = tt.stream, first+"/"+tt.name+"/streamed"
				}
				if w.served == tt.a {
					w.served = a
				}
				var msg []string
				for _, m := range tt.msg {
					msg = append(msg, strings.ReplaceAll(m, tt.a, a))
				}
				runScenario(t, name, a, tt.b, stream, w.outcome, w.aCalls, w.bCalls, msg)
			}
		}
	}
}

// runScenario posts to alias pair = [a, b] and checks what the client got and how often each
// target was called.
func runScenario(t *testing.T, name, a, b string, stream bool, w outcome, aCalls, bCalls int, msg []string) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		tt := struct{ a, b string }{a, b}
		g := newFallbackGateway(t, tt.a, tt.b)
		resp := g.post(t, chatBody("pair", stream, ""))
		got := g.outcome(t, resp, stream)
		body := got.text
		if w.text == "*" && got.text != "" {
			got.text = "*" // some text came before the in-band error
		}
		if got.status != 200 {
			got.text = w.text // an error body: its message is checked below
		}
		if got.outcome != w {
			t.Errorf("got %+v, want %+v", got.outcome, w)
		}
		if a, b := g.calls(tt.a), g.calls(tt.b); a != aCalls || b != bCalls {
			t.Errorf("got calls a=%d b=%d, want %d and %d", a, b, aCalls, bCalls)
		}
		if got.status != 200 {
			for _, m := range msg {
				if !strings.Contains(body, m) {
					t.Errorf("got message %q, want it to contain %q", body, m)
				}
			}
			if got.status >= 429 && resp.Header.Get("X-Should-Retry") != "false" {
				t.Errorf("got x-should-retry %q, want false", resp.Header.Get("X-Should-Retry"))
			}
		}
	})
}

type gotOutcome struct {
	outcome
}

// outcome reads a response whole. A 200 stream must carry exactly one preamble (one role
// chunk) and end with [DONE] or an in-band error, never both. For an error answer, text is its
// message.
func (g *fallbackGateway) outcome(t *testing.T, resp *http.Response, stream bool) gotOutcome {
	t.Helper()
	o := outcome{status: resp.StatusCode, served: resp.Header.Get("X-Sluice-Target"),
		retryAfter: resp.Header.Get("Retry-After"), attempts: resp.Header.Get("X-Sluice-Attempts")}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		var e struct {
			Error struct {
				Message string  `json:"message"`
				Code    *string `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatalf("got body %s, want an OpenAI error body", b)
		}
		if e.Error.Code != nil {
			o.code = *e.Error.Code
		}
		o.text = e.Error.Message
		if strings.Contains(string(b), "sk-") || strings.Contains(string(b), "Bearer") {
			t.Errorf("error body %s carries a credential", b)
		}
		return gotOutcome{o}
	}
	if !stream {
		var c struct {
			Choices []struct {
				Message struct {
					Content *string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
		}
		b, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(b, &c); err != nil || len(c.Choices) != 1 || c.Choices[0].Message.Content == nil {
			t.Fatalf("got %s, want a chat.completion with one choice", b)
		}
		o.text = *c.Choices[0].Message.Content
		return gotOutcome{o}
	}
	p := parse(t, frames(t, resp.Body))
	if p.roles[0] != 1 {
		t.Errorf("got %d role chunks, want exactly one preamble", p.roles[0])
	}
	o.text = p.text[0]
	if p.err != nil {
		o.code = p.err.Error.Code
		if p.done {
			t.Errorf("got [DONE] after an in-band error")
		}
	} else if !p.done {
		t.Errorf("got no [DONE] and no error: a silent truncation")
	}
	return gotOutcome{o}
}

// A client that leaves while the chain holds back cancels the attempt in flight, and no
// further attempt starts.
func TestFallbackClientLeavesBeforeCommit(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(map[bool]string{true: "streamed", false: "non-streamed"}[stream], func(t *testing.T) {
			const a = "mock/text?fail=stall"
			g := newFallbackGatewayWith(t, a, "mock/echo", "{first_event: 1m}")
			ctx, cancel := ctxWithCancel(t)
			req, _ := http.NewRequestWithContext(ctx, "POST", g.url+"/v1/chat/completions",
				strings.NewReader(chatBody("pair", stream, "")))
			done := make(chan error, 1)
			go func() {
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					resp.Body.Close()
				}
				done <- err
			}()
			deadline := time.Now().Add(5 * time.Second)
			for g.calls(a) == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the first target was never called")
				}
				time.Sleep(2 * time.Millisecond)
			}
			cancel()
			<-done
			for g.mock.Canceled() == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the attempt in flight was not canceled after the client left")
				}
				time.Sleep(2 * time.Millisecond)
			}
			g.close() // waits for the handler to return
			if got := g.calls("mock/echo"); got != 0 {
				t.Errorf("got %d calls of the second target, want none after the client left", got)
			}
		})
	}
}

// Three failures in a row put a target in cooldown (5 s): it is skipped while another target
// remains; when every target is cooling, the one whose cooldown ends first is probed, and its
// failure answers 503 with Retry-After.
func TestFallbackCooldown(t *testing.T) {
	const a, b = "mock/text?fail=500", "mock/text?fail=502"
	g := newFallbackGateway(t, a, "mock/echo")
	for i := range 4 {
		resp := g.post(t, chatBody("pair", false, ""))
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("request %d: got status %d, want 200 from the second target", i, resp.StatusCode)
		}
	}
	if got := g.calls(a); got != 3 {
		t.Errorf("got %d calls of the failing target, want 3: cooling after the third", got)
	}

	g = newFallbackGateway(t, a, b)
	for range 3 {
		resp := g.post(t, chatBody("pair", true, ""))
		io.Copy(io.Discard, resp.Body)
	}
	resp := g.post(t, chatBody("pair", true, ""))
	got := g.outcome(t, resp, true)
	if got.status != 503 || got.code != "all_targets_cooling_down" || got.retryAfter == "" || got.retryAfter == "0" {
		t.Errorf("got %+v, want 503 all_targets_cooling_down with a Retry-After", got.outcome)
	}
	if resp.Header.Get("X-Should-Retry") != "false" {
		t.Errorf("got x-should-retry %q, want false", resp.Header.Get("X-Should-Retry"))
	}
	if ca, cb := g.calls(a), g.calls(b); ca != 4 || cb != 3 {
		t.Errorf("got calls a=%d b=%d, want 4 and 3: one probe of the first to end its cooldown", ca, cb)
	}
	if !strings.Contains(got.text, "the probe of "+a+" failed") {
		t.Errorf("got message %q, want the failed probe named", got.text)
	}
}
