package mockllm

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/schema/openai"
)

func TestStreamScripts(t *testing.T) {
	weather := `get_weather({"location":"Paris, France","unit":"celsius"})`
	tests := []struct {
		name  string
		model string
		user  string
		usage bool // request include_usage
		check func(t *testing.T, f facts)
	}{
		{name: "echo", model: "echo", user: "hello there world", check: func(t *testing.T, f facts) {
			want(t, "content", f.content, []string{"hello there world"})
			want(t, "deltas", f.deltas, 3)
			want(t, "finish", f.finish, []string{"stop"})
			want(t, "done", f.done, true)
			want(t, "usage", f.usage == nil, true)
		}},
		{name: "text default", model: "text", check: func(t *testing.T, f facts) {
			want(t, "content", f.content, []string{generate(64, 1)})
		}},
		{name: "text len chunk bytes", model: "text?len=200&chunk=5", check: func(t *testing.T, f facts) {
			want(t, "content", f.content, []string{generate(200, 1)})
			want(t, "deltas", f.deltas, 40)
		}},
		{name: "text say alone", model: "text?say=Hello+world%21", check: func(t *testing.T, f facts) {
			want(t, "content", f.content, []string{"Hello world!"})
		}},
		{name: "text say at", model: "text?len=20&say=%5BSECRET%5D&at=5&chunk=0", check: func(t *testing.T, f facts) {
			g := generate(20, 1)
			want(t, "content", f.content, []string{g[:5] + "[SECRET]" + g[5:]})
			want(t, "deltas", f.deltas, 1)
		}},
		{name: "text n choices", model: "text?len=10&n=3", check: func(t *testing.T, f facts) {
			want(t, "content", f.content, []string{generate(10, 1), generate(10, 2), generate(10, 3)})
			want(t, "finish", f.finish, []string{"stop", "stop", "stop"})
		}},
		{name: "usage chunk", model: "text?len=8", user: "12345678", usage: true, check: func(t *testing.T, f facts) {
			want(t, "usage", *f.usage, openai.Usage{PromptTokens: 2, CompletionTokens: 2, TotalTokens: 4})
			want(t, "usage:null chunks", f.usageNull > 0, true)
		}},
		{name: "usage never", model: "text?len=8&usage=never", usage: true, check: func(t *testing.T, f facts) {
			want(t, "usage", f.usage == nil, true)
		}},
		{name: "usage always", model: "text?len=8&usage=always", check: func(t *testing.T, f facts) {
			want(t, "usage", f.usage != nil, true)
		}},
		{name: "reasoning_content", model: "reason?think=30&len=10", check: func(t *testing.T, f facts) {
			want(t, "reasoning", f.reasoning, generate(30, 1001))
			want(t, "content", f.content, []string{generate(10, 1)})
		}},
		{name: "reasoning field", model: "reason?field=reasoning&think=12&len=0", usage: true, check: func(t *testing.T, f facts) {
			want(t, "reasoning", f.reasoning, generate(12, 1001))
			want(t, "reasoning tokens", f.usage.CompletionTokensDetails.ReasoningTokens, 3)
		}},
		{name: "tool call", model: "tools", check: func(t *testing.T, f facts) {
			want(t, "calls", f.calls, []string{weather})
			want(t, "finish", f.finish, []string{"tool_calls"})
			want(t, "content", f.content, []string{""})
		}},
		{name: "parallel tool calls cut", model: `tools?calls=2&name=lookup&args={"q":"x"}&split=1,4`, check: func(t *testing.T, f facts) {
			want(t, "calls", f.calls, []string{`lookup({"q":"x"})`, `lookup({"q":"x"})`})
			want(t, "distinct ids", f.ids[0] != f.ids[1], true)
		}},
		{name: "text then tool", model: "tools?say=Checking.&calls=1&split=3", check: func(t *testing.T, f facts) {
			want(t, "content", f.content, []string{"Checking."})
			want(t, "calls", f.calls, []string{weather})
		}},
		{name: "refusal", model: "refuse", check: func(t *testing.T, f facts) {
			want(t, "refusal", f.refusal, "I'm sorry, but I can't help with that.")
			want(t, "content", f.content, []string{""})
			want(t, "finish", f.finish, []string{"stop"})
		}},
		{name: "logprobs", model: "text?len=20&logprobs=1&chunk=10", check: func(t *testing.T, f facts) {
			want(t, "logprobs deltas", f.logprobs, 2)
		}},
		{name: "empty", model: "empty", check: func(t *testing.T, f facts) {
			want(t, "content", f.content, []string{""})
			want(t, "deltas", f.deltas, 0)
			want(t, "finish", f.finish, []string{"stop"})
			want(t, "done", f.done, true)
		}},
		{name: "finish override", model: "text?len=5&finish=length", check: func(t *testing.T, f facts) {
			want(t, "finish", f.finish, []string{"length"})
		}},
		{name: "end nodone", model: "text?len=5&end=nodone", usage: true, check: func(t *testing.T, f facts) {
			want(t, "finish", f.finish, []string{"stop"})
			want(t, "usage", f.usage != nil, true)
			want(t, "done", f.done, false)
		}},
		{name: "end nofinish", model: "text?len=5&end=nofinish", usage: true, check: func(t *testing.T, f facts) {
			want(t, "content", f.content, []string{generate(5, 1)})
			want(t, "finish", len(f.finish), 0)
			want(t, "usage", f.usage == nil, true)
			want(t, "done", f.done, false)
		}},
		{name: "error before text", model: "text?fail=error", check: func(t *testing.T, f facts) {
			want(t, "deltas", f.deltas, 0)
			want(t, "error", f.errCode, "server_error")
			want(t, "done", f.done, true)
			want(t, "finish", len(f.finish), 0)
		}},
		{name: "error after chunks", model: "text?len=40&chunk=10&fail=error&after=2&code=boom", check: func(t *testing.T, f facts) {
			want(t, "content", f.content, []string{generate(40, 1)[:20]})
			want(t, "error", f.errCode, "boom")
		}},
		{name: "ratelimit frame", model: "text?fail=ratelimit", check: func(t *testing.T, f facts) {
			want(t, "content", f.content, []string{""}) // the role chunk came
			want(t, "error", f.errCode, "rate_limit_exceeded")
		}},
		{name: "event error", model: "text?len=10&chunk=5&fail=event&after=1", check: func(t *testing.T, f facts) {
			want(t, "deltas", f.deltas, 1)
			want(t, "event", f.errEvent, true)
			want(t, "done", f.done, false)
		}},
		{name: "cut before text", model: "text?fail=cut", check: func(t *testing.T, f facts) {
			want(t, "deltas", f.deltas, 0)
			want(t, "tail is half a data line", strings.HasPrefix(f.tail, "data: {") && !strings.HasSuffix(f.tail, "}"), true)
		}},
		{name: "cut after finish", model: "text?len=5&chunk=0&fail=cut&after=2", usage: true, check: func(t *testing.T, f facts) {
			want(t, "finish", f.finish, []string{"stop"})
			want(t, "usage", f.usage == nil, true)
			want(t, "tail", strings.HasPrefix(f.tail, `data: {"id"`), true)
		}},
		{name: "cut clamps to done", model: "text?len=5&chunk=0&fail=cut&after=99", check: func(t *testing.T, f facts) {
			want(t, "tail", f.tail, "data: [D")
		}},
		{name: "no role chunk", model: "text?len=5&role=0&fail=error", check: func(t *testing.T, f facts) {
			want(t, "content", len(f.content), 0)
		}},
		{name: "fault off after times", model: "text?len=5&fail=error&times=0", check: func(t *testing.T, f facts) {
			want(t, "error", f.errCode, "server_error") // times=0: every call
		}},
	}
	for _, m := range modes {
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				s := newTestServer()
				c, base, _ := m.start(t, s)
				resp, err := post(t.Context(), c, base, chatBody(tt.model, tt.user, true, tt.usage))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatalf("reading body: %v", err)
				}
				want(t, "status", resp.StatusCode, 200)
				want(t, "content type", resp.Header.Get("Content-Type"), "text/event-stream")
				tt.check(t, parseStream(t, body))
				want(t, "calls", s.Calls(tt.model), 1)
			})
		}
	}
}

// TestStreamBytes pins the exact wire of a small answer.
func TestStreamBytes(t *testing.T) {
	wantWire := `data: {"id":"chatcmpl-mock-1","object":"chat.completion.chunk","created":1700000000,"model":"text?say=Hi+<there>","system_fingerprint":"fp_mockllm","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-mock-1","object":"chat.completion.chunk","created":1700000000,"model":"text?say=Hi+<there>","system_fingerprint":"fp_mockllm","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-mock-1","object":"chat.completion.chunk","created":1700000000,"model":"text?say=Hi+<there>","system_fingerprint":"fp_mockllm","choices":[{"index":0,"delta":{"content":" <there>"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-mock-1","object":"chat.completion.chunk","created":1700000000,"model":"text?say=Hi+<there>","system_fingerprint":"fp_mockllm","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}

data: {"id":"chatcmpl-mock-1","object":"chat.completion.chunk","created":1700000000,"model":"text?say=Hi+<there>","system_fingerprint":"fp_mockllm","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":3,"total_tokens":4,"completion_tokens_details":{"reasoning_tokens":0}}}

data: [DONE]

`
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			s := newTestServer()
			c, base, _ := m.start(t, s)
			resp, err := post(t.Context(), c, base, chatBody("text?say=Hi+<there>", "hi", true, true))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if string(body) != wantWire {
				t.Errorf("got wire\n%s\nwant\n%s", body, wantWire)
			}
		})
	}
}

func TestReplay(t *testing.T) {
	tests := []struct {
		name  string
		model string
		file  string
	}{
		{"text", "replay?file=openai-chat-text.sse", "testdata/openai-chat-text.sse"},
		{"groq with delay", "replay?file=groq-chat-instream-error.sse&delay=1ms&first=1ms", "testdata/groq-chat-instream-error.sse"},
	}
	for _, m := range modes {
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				wantBody, err := os.ReadFile(tt.file)
				if err != nil {
					t.Fatal(err)
				}
				s := newTestServer()
				c, base, _ := m.start(t, s)
				resp, err := post(t.Context(), c, base, chatBody(tt.model, "x", true, false))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				got, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				want(t, "status", resp.StatusCode, 200)
				if string(got) != string(wantBody) {
					t.Errorf("got %d bytes, want the %d bytes of %s unchanged", len(got), len(wantBody), tt.file)
				}
			})
		}
	}
}

func TestReplayFault(t *testing.T) {
	s := newTestServer()
	c, base, _ := modes[1].start(t, s)
	resp, err := post(t.Context(), c, base, chatBody("replay?file=openai-chat-text.sse&fail=cut&after=2", "x", true, false))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	file, _ := os.ReadFile("testdata/openai-chat-text.sse")
	events := splitEvents(file)
	wantBody := string(slices.Concat(events[0], events[1], half(events[2])))
	want(t, "body", string(got), wantBody)
}

func TestSplitEvents(t *testing.T) {
	for _, in := range []string{"", "data: a\n\n", "data: a\n\ndata: b", "a\r\n\r\nb\n\n\nc"} {
		got := splitEvents([]byte(in))
		if j := string(slices.Concat(got...)); j != in {
			t.Errorf("splitEvents(%q) joined: got %q, want the input", in, j)
		}
	}
	want(t, "events", len(splitEvents([]byte("a\n\nb\r\n\r\nc"))), 3)
}

// want reports got != wantV.
func want[T any](t *testing.T, what string, got, wantV T) {
	t.Helper()
	if !reflect.DeepEqual(got, wantV) {
		t.Errorf("%s: got %#v, want %#v", what, got, wantV)
	}
}

// flushCounter is a ResponseWriter that counts its flushes.
type flushCounter struct {
	*httptest.ResponseRecorder
	flushes int
}

func (f *flushCounter) Flush() { f.flushes++; f.ResponseRecorder.Flush() }

// flush=end sends the same bytes as the default, flushed once at the end instead of frame
// by frame (after the headers).
func TestFlushEnd(t *testing.T) {
	bodies := map[string]string{}
	for _, model := range []string{"text?len=40&chunk=10", "text?len=40&chunk=10&flush=end"} {
		s := newTestServer()
		w := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
		s.ServeHTTP(w, httptest.NewRequest("POST", "/v1/chat/completions", bytes.NewReader(chatBody(model, "hi", true, true))))
		frames := strings.Count(w.Body.String(), "\n\n")
		wantFlushes := frames + 1 // the headers, then each frame
		if strings.HasSuffix(model, "flush=end") {
			wantFlushes = 2 // the headers, then the whole stream
		}
		if w.flushes != wantFlushes || frames < 6 {
			t.Errorf("%s: %d flushes for %d frames, want %d", model, w.flushes, frames, wantFlushes)
		}
		bodies[model] = w.Body.String()
	}
	if bodies["text?len=40&chunk=10"] != strings.ReplaceAll(bodies["text?len=40&chunk=10&flush=end"], "&flush=end", "") {
		t.Errorf("flush=end changed the bytes:\n%s\nwant\n%s", bodies["text?len=40&chunk=10&flush=end"], bodies["text?len=40&chunk=10"])
	}
	s := newTestServer()
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest("POST", "/v1/chat/completions", bytes.NewReader(chatBody("text?flush=never", "hi", true, true))))
	if w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), "flush") {
		t.Errorf("flush=never: got %d %s, want the mock's 404 for a bad script naming the option", w.Code, w.Body)
	}
}
