package mockllm

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/schema/openai"
)

func TestHTTPErrors(t *testing.T) {
	tests := []struct {
		name       string
		model      string
		status     int
		retryAfter string
		typ, code  string
	}{
		{"429", "text?fail=429", 429, "1", "requests", "rate_limit_exceeded"},
		{"429 retry", "text?fail=429&retry=7", 429, "7", "requests", "rate_limit_exceeded"},
		{"429 no retry", "text?fail=429&retry=0", 429, "", "requests", "rate_limit_exceeded"},
		{"500", "echo?fail=500", 500, "", "server_error", ""},
		{"503 retry", "text?fail=503&retry=3", 503, "3", "server_error", ""},
		{"400", "text?fail=400", 400, "", "invalid_request_error", ""},
		{"401", "text?fail=401", 401, "", "invalid_request_error", "invalid_api_key"},
		{"404", "text?fail=404", 404, "", "invalid_request_error", "model_not_found"},
		{"413", "text?fail=413", 413, "", "invalid_request_error", "request_too_large"},
		{"422 overrides", "text?fail=422&type=x&code=y&msg=z", 422, "", "x", "y"},
		{"unknown script", "gpt-9", 404, "", "invalid_request_error", "model_not_found"},
		{"unknown option", "text?size=3", 404, "", "invalid_request_error", "model_not_found"},
		{"bad value", "text?len=many", 404, "", "invalid_request_error", "model_not_found"},
		{"replay missing file", "replay?file=nope.sse", 404, "", "invalid_request_error", "model_not_found"},
		{"replay escapes", "replay?file=../doc.go", 404, "", "invalid_request_error", "model_not_found"},
	}
	for _, m := range modes {
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				s := newTestServer()
				c, base, _ := m.start(t, s)
				for _, stream := range []bool{true, false} {
					resp, err := post(t.Context(), c, base, chatBody(tt.model, "x", stream, false))
					if err != nil {
						t.Fatal(err)
					}
					e := decodeError(t, resp)
					want(t, "status", resp.StatusCode, tt.status)
					want(t, "Retry-After", resp.Header.Get("Retry-After"), tt.retryAfter)
					want(t, "type", e.Type, tt.typ)
					want(t, "code", e.Code, tt.code)
					want(t, "message set", e.Message != "", true)
				}
			})
		}
	}
}

type errBody struct{ Message, Type, Code string }

func decodeError(t *testing.T, resp *http.Response) errBody {
	t.Helper()
	defer resp.Body.Close()
	want(t, "content type", resp.Header.Get("Content-Type"), "application/json")
	var e struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatalf("error body: %v", err)
	}
	b := errBody{Message: e.Error.Message, Type: e.Error.Type}
	if e.Error.Code != nil {
		b.Code = *e.Error.Code
	}
	return b
}

func TestTimes(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			s := newTestServer()
			c, base, _ := m.start(t, s)
			model := "echo?fail=503&times=2"
			var got []int
			for range 4 {
				resp, err := post(t.Context(), c, base, chatBody(model, "hi", true, false))
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				got = append(got, resp.StatusCode)
			}
			want(t, "statuses", got, []int{503, 503, 200, 200})
			want(t, "calls", s.Calls(model), 4)
			want(t, "other model calls", s.Calls("echo"), 0)
		})
	}
}

func TestNonStream(t *testing.T) {
	tests := []struct {
		name  string
		model string
		check func(t *testing.T, c completionWire)
	}{
		{"text", "text?len=30&n=2", func(t *testing.T, c completionWire) {
			want(t, "choices", len(c.Choices), 2)
			want(t, "content", *c.Choices[0].Message.Content, generate(30, 1))
			want(t, "content 1", *c.Choices[1].Message.Content, generate(30, 2))
			want(t, "finish", c.Choices[0].FinishReason, "stop")
			want(t, "usage", c.Usage.CompletionTokens, 15)
		}},
		{"echo", "echo", func(t *testing.T, c completionWire) {
			want(t, "content", *c.Choices[0].Message.Content, "say this")
		}},
		{"tools", "tools?calls=2", func(t *testing.T, c completionWire) {
			want(t, "content null", c.Choices[0].Message.Content == nil, true)
			want(t, "calls", len(c.Choices[0].Message.ToolCalls), 2)
			want(t, "args", c.Choices[0].Message.ToolCalls[1].Function.Arguments, `{"location":"Tokyo, Japan","unit":"celsius"}`)
			want(t, "finish", c.Choices[0].FinishReason, "tool_calls")
		}},
		{"refusal", "refuse?say=No.", func(t *testing.T, c completionWire) {
			want(t, "content null", c.Choices[0].Message.Content == nil, true)
			want(t, "refusal", *c.Choices[0].Message.Refusal, "No.")
		}},
		{"reasoning", "reason?think=8&len=4", func(t *testing.T, c completionWire) {
			want(t, "reasoning_content", c.Choices[0].Message.ReasoningContent, generate(8, 1001))
		}},
	}
	for _, m := range modes {
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				s := newTestServer()
				c, base, _ := m.start(t, s)
				resp, err := post(t.Context(), c, base, chatBody(tt.model, "say this", false, false))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				want(t, "status", resp.StatusCode, 200)
				var got completionWire
				if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
					t.Fatal(err)
				}
				want(t, "object", got.Object, "chat.completion")
				want(t, "id", got.ID, "chatcmpl-mock-1")
				want(t, "model", got.Model, tt.model)
				tt.check(t, got)
			})
		}
	}
}

type completionWire struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content          *string           `json:"content"`
			Refusal          *string           `json:"refusal"`
			ReasoningContent string            `json:"reasoning_content"`
			ToolCalls        []openai.ToolCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage openai.Usage `json:"usage"`
}

func TestRequestsAndRoutes(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			s := newTestServer()
			c, base, _ := m.start(t, s)
			body := `{"model":"echo","messages":[{"role":"system","content":"sys"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"b"}]}],"extra":{"kept":true},"stream":true}`
			resp, err := post(t.Context(), c, base, []byte(body))
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want(t, "echo of parts", parseStream(t, raw).content, []string{"a\nb"})
			want(t, "last request", string(s.LastRequest("echo")), body)
			want(t, "last request of unknown", s.LastRequest("text") == nil, true)

			resp, err = c.Get(base + "/models")
			if err != nil {
				t.Fatal(err)
			}
			var list struct {
				Data []modelObject `json:"data"`
			}
			json.NewDecoder(resp.Body).Decode(&list)
			resp.Body.Close()
			want(t, "models", len(list.Data), len(scriptNames))

			resp, err = c.Get(base + "/models/text?x")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			want(t, "GET /models/text", resp.StatusCode, 200)

			for _, tc := range []struct {
				method, path, body string
				status             int
			}{
				{"GET", "/chat/completions", "", 405},
				{"POST", "/completions", "{}", 404},
				{"POST", "/chat/completions", "{not json", 400},
				{"POST", "/chat/completions", `{"messages":[]}`, 400},
				{"GET", "/models/nope", "", 404},
			} {
				req, _ := http.NewRequestWithContext(t.Context(), tc.method, base+tc.path, strings.NewReader(tc.body))
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				decodeError(t, resp)
				want(t, tc.method+" "+tc.path+" "+tc.body, resp.StatusCode, tc.status)
			}
		})
	}
}

func TestParseScript(t *testing.T) {
	bad := []string{"", "nope", "text?len=-1", "text?len=1&len=2", "echo?len=3", "echo?say=x",
		"replay", "replay?file=a.sse&len=3", "text?chunk=x", "text?n=0", "text?field=thoughts",
		"text?args={bad", "text?fail=teapot", "text?fail=302", "text?delay=soon", "text?end=never",
		"text?split=0", "text?usage=maybe", "text?%zz"}
	for _, m := range bad {
		if _, err := parseScript(m); err == nil {
			t.Errorf("parseScript(%q): got no error, want one", m)
		}
	}
	sc, err := parseScript("tools?split=9,3&chunk=4w&fail=429")
	if err != nil {
		t.Fatal(err)
	}
	want(t, "cuts", sc.cuts, []int{3, 9})
	want(t, "chunk", [2]any{sc.chunk, sc.chunkWords}, [2]any{4, true})
	want(t, "status", sc.status, 429)
	want(t, "calls", sc.calls, 1)
}

func TestSplit(t *testing.T) {
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{"bytes", splitText("abcdefg", 3, false), []string{"abc", "def", "g"}},
		{"runes whole", splitText("héllo", 2, false), []string{"h", "é", "ll", "o"}},
		{"rune wider than size", splitText("日本", 1, false), []string{"日", "本"}},
		{"words", splitText("one two  three", 2, true), []string{"one two", "  three"}},
		{"whole", splitText("a b", 0, true), []string{"a b"}},
		{"empty", splitText("", 3, true), nil},
		{"cuts", splitAt(`{"a":1}`, []int{0, 2, 2, 5, 99}), []string{`{"`, `a":`, `1}`}},
		{"cuts in rune", splitAt("aé", []int{2}), []string{"aé"}},
	}
	for _, tt := range tests {
		want(t, tt.name, tt.got, tt.want)
	}
	for _, n := range []int{0, 1, 7, 100, 1000} {
		want(t, "generate length", len(generate(n, 3)), n)
	}
	want(t, "generate deterministic", generate(50, 9), generate(50, 9))
}
