package chat

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

func TestDecodeChatErrors(t *testing.T) {
	tests := []struct {
		name, body, param, msg string
	}{
		{"malformed", `{"model":"x",`, "", "could not parse"},
		{"not an object", `[1,2]`, "", "JSON object"},
		{"trailing data", `{"model":"x","messages":[{"role":"user","content":"hi"}]} {}`, "", "after the top-level"},
		{"missing model", `{"messages":[{"role":"user","content":"hi"}]}`, "model", "Missing required parameter: 'model'"},
		{"missing messages", `{"model":"x"}`, "messages", "'messages'"},
		{"empty messages", `{"model":"x","messages":[]}`, "messages", "empty array"},
		{"model not a string", `{"model":3,"messages":[{"role":"user","content":"hi"}]}`, "model", "expected a string"},
		{"messages not an array", `{"model":"x","messages":"hi"}`, "messages", "array of message"},
		{"bad role", `{"model":"x","messages":[{"role":"robot","content":"hi"}]}`, "messages[0].role", "'robot'"},
		{"temperature type", `{"model":"x","messages":[{"role":"user","content":"hi"}],"temperature":"hot"}`, "temperature", "expected a number"},
		{"temperature range", `{"model":"x","messages":[{"role":"user","content":"hi"}],"temperature":3}`, "temperature", "out of range"},
		{"n type", `{"model":"x","messages":[{"role":"user","content":"hi"}],"n":1.5}`, "n", "integer"},
		{"stream type", `{"model":"x","messages":[{"role":"user","content":"hi"}],"stream":"yes"}`, "stream", "boolean"},
		{"content type", `{"model":"x","messages":[{"role":"user","content":5}]}`, "messages[0].content", "content parts"},
		{"part type", `{"model":"x","messages":[{"role":"user","content":[{"type":"audio"}]}]}`, "messages[0].content[0].type", "'audio'"},
		{"image in system", `{"model":"x","messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"http://a/b.png"}}]}]}`, "messages[0].content[0].type", "only allowed in user"},
		{"tool without id", `{"model":"x","messages":[{"role":"tool","content":"r"}]}`, "messages[0].tool_call_id", "tool_call_id"},
		{"tools bad name", `{"model":"x","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"a b"}}]}`, "tools[0].function.name", "must match"},
		{"tool_choice value", `{"model":"x","messages":[{"role":"user","content":"hi"}],"tool_choice":"maybe"}`, "tool_choice", "'maybe'"},
		{"stop too many", `{"model":"x","messages":[{"role":"user","content":"hi"}],"stop":["a","b","c","d","e"]}`, "stop", "at most 4"},
		{"duplicate", `{"model":"x","model":"y","messages":[{"role":"user","content":"hi"}]}`, "model", "Duplicate"},
		{"response_format", `{"model":"x","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"xml"}}`, "response_format.type", "'xml'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.body))
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *llm.Error", err)
			}
			if e.Kind != llm.Invalid || llm.HTTPStatus(err) != 400 {
				t.Errorf("got kind %v status %d, want invalid 400", e.Kind, llm.HTTPStatus(err))
			}
			if e.Param != tt.param {
				t.Errorf("got param %q, want %q", e.Param, tt.param)
			}
			if !strings.Contains(e.Message, tt.msg) {
				t.Errorf("got message %q, want it to contain %q", e.Message, tt.msg)
			}
		})
	}
}

func TestDecodeChatFields(t *testing.T) {
	body := `{"model":"default","messages":[{"role":"system","content":"be brief"},
	{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA","detail":"low"}}]},
	{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},
	{"role":"tool","tool_call_id":"call_1","content":"42"}],
	"stream":true,"stream_options":{"include_usage":true},"n":2,"max_completion_tokens":50,"temperature":0.5,
	"stop":"END","seed":7,"logprobs":true,"top_logprobs":2,"user":"u1","tool_choice":"auto",
	"parallel_tool_calls":false,"metadata":{"a":"b"}}`
	cr, err := Decode([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	r := &cr.Req
	if cr.Model != "default" || !r.Stream || !r.IncludeUsage || r.N != 2 || *r.MaxCompletionTokens != 50 || *r.Temperature != 0.5 {
		t.Errorf("got %+v, want the scalar fields decoded", r)
	}
	if len(r.Messages) != 4 || !r.Messages[0].Plain || r.Messages[1].Parts[1].URL != "data:image/png;base64,AAAA" ||
		r.Messages[2].ToolCalls[0].ID != "call_1" || r.Messages[3].ToolCallID != "call_1" {
		t.Errorf("got messages %+v, want them decoded", r.Messages)
	}
	if len(r.Stop) != 1 || r.Stop[0] != "END" || *r.Seed != 7 || !r.Logprobs || *r.TopLogprobs != 2 || r.User != "u1" {
		t.Errorf("got %+v, want stop, seed, logprobs, user", r)
	}
	if len(r.Extra) != 2 || r.Extra[0].Name != "parallel_tool_calls" || string(r.Extra[0].Value) != "false" ||
		r.Extra[1].Name != "metadata" || string(r.Extra[1].Value) != `{"a":"b"}` {
		t.Errorf("got extra %+v, want the unmodelled fields raw and in order", r.Extra)
	}
}

func FuzzDecodeChat(f *testing.F) {
	f.Add([]byte(`{"model":"x","messages":[{"role":"user","content":"hi"}]}`))
	f.Add([]byte(`{"model":"x","messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"n":3}`))
	f.Add([]byte(`{"model":"x","messages":null}`))
	f.Add([]byte(`{"model":"x","prompt_cache_key":"k","user":"u","tools":[{"type":"function","function":{"name":"f","cache_control":{"type":"ephemeral"}},"cache_control":{"type":"ephemeral","ttl":"1h"}}],` +
		`"messages":[{"role":"system","content":"s","cache_control":{"type":"ephemeral","ttl":"5m"}},{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}],"cache_control":{"type":"ephemeral"}},{"role":"tool","tool_call_id":"c","content":"r","cache_control":{"type":"x","ttl":9}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		cr, err := Decode(b)
		if err == nil && (cr.Model == "" || len(cr.Req.Messages) == 0) {
			t.Fatalf("accepted a request without model or messages: %q", b)
		}
		if err == nil {
			r := &cr.Req
			for _, c := range r.CacheMarks() {
				if c.TTL != "" && c.TTL != "5m" && c.TTL != "1h" {
					t.Fatalf("%q: a breakpoint with ttl %q, which no provider takes", b, c.TTL)
				}
			}
			if r.PromptCacheKey != "" && r.Session != r.PromptCacheKey || r.PromptCacheKey == "" && r.Session != r.User {
				t.Fatalf("%q: session %q, want the prompt_cache_key %q, else the user %q", b, r.Session, r.PromptCacheKey, r.User)
			}
		}
		if err != nil && llm.HTTPStatus(err) != 400 {
			t.Fatalf("got status %d for %q, want 400", llm.HTTPStatus(err), b)
		}
	})
}

// The request of the load bench (sluicebench) and of a short conversation.
func BenchmarkDecode(b *testing.B) {
	for _, c := range []struct{ name, body string }{
		{"short", `{"model":"mock/text?len=200&chunk=10","messages":[{"role":"user","content":"Say something."}]}`},
		{"conversation", `{"model":"gpt-4o-mini","temperature":0.2,"max_tokens":256,"stream":true,"stream_options":{"include_usage":true},"messages":[` +
			`{"role":"system","content":"You are a helpful assistant.\nAnswer briefly."},{"role":"user","content":"What is the capital of France?"},` +
			`{"role":"assistant","content":"Paris."},{"role":"user","content":[{"type":"text","text":"And of Spain?"}]}],"user":"u-1","metadata":{"a":"b"}}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			body := []byte(c.body)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Decode(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
