package mockllm

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

// anthropicHeaders are the headers the API requires.
var anthropicHeaders = []string{"x-api-key", "sk-ant-mock", "anthropic-version", "2023-06-01"}

func anthropicBody(model string, stream bool) string {
	return jsonBody(map[string]any{"model": model, "max_tokens": 1024, "stream": stream,
		"system": "Be brief.", "messages": []map[string]any{
			{"role": "user", "content": "first"},
			{"role": "assistant", "content": []map[string]any{{"type": "text", "text": "ok"}}},
			{"role": "user", "content": []map[string]any{{"type": "text", "text": "say this"}}},
		}})
}

// anthropicStream posts a streamed request for model and returns its events and tail.
func anthropicStream(t *testing.T, c *http.Client, base, model string) ([]sseEvent, string) {
	t.Helper()
	resp := postJSON(t.Context(), t, c, base+"/messages", anthropicBody(model, true), anthropicHeaders...)
	body := readAll(t, resp)
	want(t, "status", resp.StatusCode, 200)
	want(t, "content type", resp.Header.Get("Content-Type"), "text/event-stream")
	return parseSSE(t, body)
}

// TestAnthropicLikeFixtures compares the mock's streams with recordings of comparable
// answers: the same sequence of event and block types (deltas collapsed, pings apart), and
// only keys the recordings show.
func TestAnthropicLikeFixtures(t *testing.T) {
	tests := []struct {
		model, fixture string
		pings          bool // compare pings too
	}{
		{"text?len=40", "anthropic-text.sse", true},
		{"tools?say=I'll+check+the+weather.&split=5", "anthropic-tool-use.sse", true},
		{"reason?think=60&len=30", "anthropic-thinking.sse", true},
		{`tools?say=I'll+update+the+list.&args={}&name=updateIssueList`, "anthropic-text-and-tool-no-args.sse", false},
		{"text?len=40&chunk=5&fail=error&after=3", "anthropic-instream-overloaded-error.sse", false},
	}
	fixtureKeys := map[string][]string{}
	for _, tt := range tests {
		for k, v := range keySets(t, fixtureEvents(t, tt.fixture)) {
			fixtureKeys[k] = append(fixtureKeys[k], v...)
		}
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			s := newTestServer()
			c, base, _ := modes[1].start(t, s)
			got, tail := anthropicStream(t, c, base, tt.model)
			want(t, "tail", tail, "")
			var skip []string
			if !tt.pings {
				skip = []string{"ping"}
			}
			want(t, "shape", shapes(t, got, skip...), shapes(t, fixtureEvents(t, tt.fixture), skip...))
			checkKeys(t, keySets(t, got), fixtureKeys)
			decodeAnthropic(t, got)
		})
	}
}

func TestAnthropicStream(t *testing.T) {
	weather := `tool_use:get_weather({"location":"Paris, France","unit":"celsius"}) valid:true`
	tests := []struct {
		name, model string
		blocks      []string
		stop        string
		stopped     bool
		errType     string
		check       func(t *testing.T, r anthResult, events []sseEvent)
	}{
		{name: "text", model: "text?len=20&chunk=4", blocks: []string{"text:" + generate(20, 1)}, stop: "end_turn", stopped: true,
			check: func(t *testing.T, r anthResult, events []sseEvent) {
				want(t, "names", names(events)[:3], []string{"message_start", "content_block_start", "ping"})
				want(t, "input tokens", *r.msg.Usage.InputTokens, tokens(len("Be brief.firstoksay this")))
				want(t, "output tokens", r.msg.Usage.OutputTokens, 5)
				want(t, "id", r.msg.ID, "msg_mock_1")
				want(t, "model", r.msg.Model, "text?len=20&chunk=4")
			}},
		{name: "echo", model: "echo", blocks: []string{"text:say this"}, stop: "end_turn", stopped: true},
		{name: "thinking", model: "reason?think=30&len=10&chunk=0", stop: "end_turn", stopped: true,
			blocks: []string{"thinking:" + generate(30, 1001) + " signed:true", "text:" + generate(10, 1)}},
		{name: "tools", model: "tools?calls=2&split=1,5,9", stop: "tool_use", stopped: true,
			blocks: []string{weather, `tool_use:get_weather({"location":"Tokyo, Japan","unit":"celsius"}) valid:true`},
			check: func(t *testing.T, r anthResult, events []sseEvent) {
				for _, ev := range events {
					if strings.Contains(ev.data, `"index":0,"delta":{"type":"input_json_delta"`) {
						want(t, "first fragment", ev.data, `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":""}}`)
						break
					}
				}
				want(t, "tool ids", r.blocks[0].ID != r.blocks[1].ID, true)
			}},
		{name: "refusal", model: "refuse", blocks: []string{"text:I'm sorry, but I can't help with that."}, stop: "refusal", stopped: true},
		{name: "empty", model: "empty", stop: "end_turn", stopped: true, check: func(t *testing.T, r anthResult, events []sseEvent) {
			want(t, "names", names(events), []string{"message_start", "ping", "message_delta", "message_stop"})
		}},
		{name: "finish length", model: "text?len=5&finish=length", blocks: []string{"text:" + generate(5, 1)}, stop: "max_tokens", stopped: true},
		{name: "finish passes through", model: "text?len=5&finish=stop_sequence", blocks: []string{"text:" + generate(5, 1)}, stop: "stop_sequence", stopped: true},
		{name: "max cuts tool JSON", model: "tools?say=Hi.&max=4", stop: "max_tokens", stopped: true,
			blocks: []string{"text:Hi.", `tool_use:get_weather({"location":") valid:false`}}, // 16 bytes
		{name: "nodone", model: "text?len=5&end=nodone", blocks: []string{"text:" + generate(5, 1)}, stop: "end_turn"},
		{name: "nofinish", model: "text?len=5&end=nofinish", blocks: []string{"text:" + generate(5, 1)},
			check: func(t *testing.T, r anthResult, events []sseEvent) {
				want(t, "stop reason", r.msg.StopReason == nil, true)
				want(t, "last", events[len(events)-1].name, "content_block_stop")
			}},
		{name: "error after message_start", model: "text?fail=error", errType: "overloaded_error",
			check: func(t *testing.T, r anthResult, events []sseEvent) {
				want(t, "names", names(events), []string{"message_start", "error"})
				want(t, "error", events[1].data, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			}},
		{name: "event after text", model: "text?len=20&chunk=10&fail=event&after=3", errType: "overloaded_error",
			blocks: []string{"text:" + generate(20, 1)[:10]}},
		{name: "ratelimit", model: "text?fail=ratelimit&after=1", errType: "rate_limit_error", blocks: []string{"text:"}},
		{name: "error overrides", model: "text?fail=error&type=api_error&msg=boom", errType: "api_error",
			check: func(t *testing.T, r anthResult, events []sseEvent) {
				want(t, "error", events[1].data, `{"type":"error","error":{"type":"api_error","message":"boom"}}`)
			}},
		{name: "error in place of message_stop", model: "text?len=5&chunk=0&fail=error&after=99", errType: "overloaded_error",
			blocks: []string{"text:" + generate(5, 1)}, stop: "end_turn"},
	}
	for _, m := range modes {
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				s := newTestServer()
				c, base, _ := m.start(t, s)
				events, tail := anthropicStream(t, c, base, tt.model)
				want(t, "tail", tail, "")
				r := decodeAnthropic(t, events)
				want(t, "blocks", r.blockText(), tt.blocks)
				stop := ""
				if r.msg.StopReason != nil {
					stop = *r.msg.StopReason
				}
				want(t, "stop reason", stop, tt.stop)
				want(t, "message_stop", r.stopped, tt.stopped)
				want(t, "error", r.errType, tt.errType)
				want(t, "calls", s.Calls(tt.model), 1)
				if tt.check != nil {
					tt.check(t, r, events)
				}
			})
		}
	}
}

func TestAnthropicCutAndAbort(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			s := newTestServer()
			c, base, _ := m.start(t, s)
			events, tail := anthropicStream(t, c, base, "text?len=10&chunk=5&fail=cut&after=2")
			want(t, "events", names(events), []string{"message_start", "content_block_start", "ping"})
			want(t, "tail", strings.HasPrefix(tail, "event: content_block_delta\ndata: {") && !strings.HasSuffix(tail, "}"), true)

			resp := postJSON(t.Context(), t, c, base+"/messages", anthropicBody("text?fail=abort&after=1", true), anthropicHeaders...)
			defer resp.Body.Close()
			got, err := io.ReadAll(resp.Body)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("read: got %v, want io.ErrUnexpectedEOF", err)
			}
			events, _ = parseSSE(t, got)
			want(t, "events before the cut", names(events), []string{"message_start", "content_block_start"})
		})
	}
}

func TestAnthropicNonStream(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			s := newTestServer()
			c, base, _ := m.start(t, s)
			model := "reason?think=8&len=6&calls=1&max=100"
			resp := postJSON(t.Context(), t, c, base+"/messages", anthropicBody(model, false), anthropicHeaders...)
			body := readAll(t, resp)
			want(t, "status", resp.StatusCode, 200)
			want(t, "content type", resp.Header.Get("Content-Type"), "application/json")
			var msg anthMessage
			dec := json.NewDecoder(strings.NewReader(string(body)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&msg); err != nil {
				t.Fatalf("message %s: %v", body, err)
			}
			want(t, "id type role", []string{msg.ID, msg.Type, msg.Role, msg.Model}, []string{"msg_mock_1", "message", "assistant", model})
			want(t, "stop", *msg.StopReason, "tool_use")
			want(t, "blocks", len(msg.Content), 3)
			want(t, "thinking", *msg.Content[0].Thinking, generate(8, 1001))
			want(t, "signature", *msg.Content[0].Signature, signature(generate(8, 1001)))
			want(t, "text", *msg.Content[1].Text, generate(6, 1))
			want(t, "tool input", string(msg.Content[2].Input), `{"location":"Paris, France","unit":"celsius"}`)
			want(t, "output tokens", msg.Usage.OutputTokens, tokens(8+6+len("get_weather")+44))
		})
	}
}

// TestAnthropicErrors checks the HTTP errors come in Anthropic's shape with the status the
// API uses for each type.
func TestAnthropicErrors(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		headers    []string
		status     int
		typ        string
		retryAfter string
	}{
		{"500", anthropicBody("text?fail=500", true), anthropicHeaders, 500, "api_error", ""},
		{"529", anthropicBody("text?fail=529", true), anthropicHeaders, 529, "overloaded_error", ""},
		{"429", anthropicBody("text?fail=429", true), anthropicHeaders, 429, "rate_limit_error", "1"},
		{"429 retry", anthropicBody("text?fail=429&retry=9", false), anthropicHeaders, 429, "rate_limit_error", "9"},
		{"401", anthropicBody("text?fail=401", true), anthropicHeaders, 401, "authentication_error", ""},
		{"403", anthropicBody("text?fail=403", true), anthropicHeaders, 403, "permission_error", ""},
		{"404", anthropicBody("text?fail=404", true), anthropicHeaders, 404, "not_found_error", ""},
		{"413", anthropicBody("text?fail=413", true), anthropicHeaders, 413, "request_too_large", ""},
		{"400", anthropicBody("text?fail=400", true), anthropicHeaders, 400, "invalid_request_error", ""},
		{"type override", anthropicBody("text?fail=400&type=billing_error", true), anthropicHeaders, 400, "billing_error", ""},
		{"non-stream error", anthropicBody("text?fail=error", false), anthropicHeaders, 529, "overloaded_error", ""},
		{"non-stream ratelimit", anthropicBody("text?fail=ratelimit", false), anthropicHeaders, 429, "rate_limit_error", "1"},
		{"unknown script", anthropicBody("claude-9", true), anthropicHeaders, 404, "not_found_error", ""},
		{"embed", anthropicBody("embed", true), anthropicHeaders, 404, "not_found_error", ""},
		{"replay missing", anthropicBody("replay?file=nope.sse", true), anthropicHeaders, 404, "not_found_error", ""},
		{"no key", anthropicBody("text", true), anthropicHeaders[2:], 401, "authentication_error", ""},
		{"no version", anthropicBody("text", true), anthropicHeaders[:2], 400, "invalid_request_error", ""},
		{"no max_tokens", `{"model":"text","messages":[]}`, anthropicHeaders, 400, "invalid_request_error", ""},
		{"no messages", `{"model":"text","max_tokens":5}`, anthropicHeaders, 400, "invalid_request_error", ""},
		{"bad JSON", `{"model":`, anthropicHeaders, 400, "invalid_request_error", ""},
	}
	for _, m := range modes {
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				s := newTestServer()
				c, base, _ := m.start(t, s)
				resp := postJSON(t.Context(), t, c, base+"/messages", tt.body, tt.headers...)
				want(t, "status", resp.StatusCode, tt.status)
				want(t, "retry-after", resp.Header.Get("Retry-After"), tt.retryAfter)
				want(t, "content type", resp.Header.Get("Content-Type"), "application/json")
				var e anthropicError
				dec := json.NewDecoder(strings.NewReader(string(readAll(t, resp))))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&e); err != nil {
					t.Fatal(err)
				}
				want(t, "type", e.Type, "error")
				want(t, "error type", e.Error.Type, tt.typ)
				want(t, "message set", e.Error.Message != "", true)
			})
		}
	}
	s := newTestServer()
	c, base, _ := modes[1].start(t, s)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/messages", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	want(t, "GET status", resp.StatusCode, 405)
	want(t, "GET body", string(readAll(t, resp)), `{"type":"error","error":{"type":"invalid_request_error","message":"Invalid method for URL (GET /v1/messages)"}}`+"\n")
}

func TestAnthropicTimesAndReplay(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			s := newTestServer()
			c, base, _ := m.start(t, s)
			model := "text?fail=529&times=1"
			var got []int
			for range 2 {
				resp := postJSON(t.Context(), t, c, base+"/messages", anthropicBody(model, true), anthropicHeaders...)
				readAll(t, resp)
				got = append(got, resp.StatusCode)
			}
			want(t, "statuses", got, []int{529, 200})
			want(t, "calls", s.Calls(model), 2)
			want(t, "last request", string(s.LastRequest(model)), anthropicBody(model, true))

			file, _ := os.ReadFile("testdata/anthropic-tool-use.sse")
			resp := postJSON(t.Context(), t, c, base+"/messages", anthropicBody("replay?file=anthropic-tool-use.sse", true), anthropicHeaders...)
			want(t, "replay", string(readAll(t, resp)), string(file))

			resp = postJSON(t.Context(), t, c, base+"/messages", anthropicBody("replay?file=anthropic-text.sse&fail=error&after=4", true), anthropicHeaders...)
			events, _ := parseSSE(t, readAll(t, resp))
			want(t, "replay fault", names(events), []string{"message_start", "content_block_start", "ping",
				"content_block_delta", "error"})
		})
	}
}
