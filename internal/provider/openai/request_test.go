package openai

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

func ptr[T any](v T) *T { return &v }

func richRequest() *llm.Request {
	return &llm.Request{
		Model: "gpt-4o",
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Parts: []llm.Part{{Type: llm.PartText, Text: "Be brief."}}, Plain: true},
			{Role: llm.RoleUser, Parts: []llm.Part{
				{Type: llm.PartText, Text: "What is in \"this\" image?\n"},
				{Type: llm.PartImage, URL: "data:image/png;base64,AAAA", Detail: "low"},
			}},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "look", Arguments: `{"x":1}`}}},
			{Role: llm.RoleTool, ToolCallID: "call_1", Parts: []llm.Part{{Type: llm.PartText, Text: "a cat"}}, Plain: true},
		},
		Tools:               []llm.Tool{{Name: "look", Description: "Look.", Parameters: json.RawMessage(`{"type":"object"}`), Strict: ptr(true)}},
		ToolChoice:          json.RawMessage(`"auto"`),
		ResponseFormat:      json.RawMessage(`{"type":"json_object"}`),
		N:                   2,
		MaxCompletionTokens: ptr(100),
		Temperature:         ptr(0.7),
		TopP:                ptr(1.0),
		Stop:                []string{"END"},
		User:                "u1",
		Seed:                ptr(int64(42)),
		Logprobs:            true,
		TopLogprobs:         ptr(2),
		Extra: []llm.Field{
			{Name: "parallel_tool_calls", Value: json.RawMessage(`false`)},
			{Name: "metadata", Value: json.RawMessage(`{"b": 1, "a": [1, 2]}`)},
			{Name: "stream", Value: json.RawMessage(`false`)}, // modeled: never sent twice
			{Name: "service_tier", Value: json.RawMessage(`"flex"`)},
		},
	}
}

func TestEncodeRequest(t *testing.T) {
	const want = `{"model":"gpt-4o","messages":[` +
		`{"role":"system","content":"Be brief."},` +
		`{"role":"user","content":[{"type":"text","text":"What is in \"this\" image?\n"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA","detail":"low"}}]},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"look","arguments":"{\"x\":1}"}}]},` +
		`{"role":"tool","content":"a cat","tool_call_id":"call_1"}],` +
		`"tools":[{"type":"function","function":{"name":"look","description":"Look.","parameters":{"type":"object"},"strict":true}}],` +
		`"tool_choice":"auto","response_format":{"type":"json_object"},"n":2,"max_completion_tokens":100,"temperature":0.7,"top_p":1,` +
		`"stop":["END"],"user":"u1","seed":42,"logprobs":true,"top_logprobs":2,"stream":true,"stream_options":{"include_usage":true},` +
		`"parallel_tool_calls":false,"metadata":{"b": 1, "a": [1, 2]},"service_tier":"flex"}`
	got, err := encodeRequest(richRequest(), true)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if !json.Valid(got) {
		t.Error("got invalid JSON")
	}
	again, _ := encodeRequest(richRequest(), true)
	if !bytes.Equal(got, again) {
		t.Error("two encodings differ, want deterministic output")
	}
}

func TestEncodeRequestInvalidRaw(t *testing.T) {
	r := testRequest()
	r.Extra = []llm.Field{{Name: "x", Value: json.RawMessage(`{`)}}
	if _, err := encodeRequest(r, true); llm.KindOf(err) != llm.Internal {
		t.Errorf("got %v, want an Internal error", err)
	}
}

// TestRequestOnTheWire checks what the upstream receives through openai-go: body, headers,
// query and auth.
func TestRequestOnTheWire(t *testing.T) {
	tests := []struct {
		name            string
		noStreamOptions bool
	}{
		{"with stream options", false},
		{"no stream options", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, providertest.SSE(roleChunk+finishChunk+doneLine))
			c := u.client(Config{
				Headers:         map[string]string{"api-key": "azure-key", "X-Team": "blue"},
				Query:           map[string]string{"api-version": "2024-10-21"},
				NoStreamOptions: tt.noStreamOptions,
			})
			_, end := providertest.Drain(t, openStream(t, c))
			wantEOF(t, end)
			body, header, rawURL := u.Last()

			want, _ := encodeRequest(testRequest(), !tt.noStreamOptions)
			if !bytes.Equal(body, want) {
				t.Errorf("body: got\n%s\nwant\n%s", body, want)
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatalf("body is not JSON: %v", err)
			}
			if string(m["stream"]) != "true" {
				t.Errorf("stream: got %s, want true", m["stream"])
			}
			_, hasOpts := m["stream_options"]
			if hasOpts == tt.noStreamOptions {
				t.Errorf("stream_options present: got %v, want %v", hasOpts, !tt.noStreamOptions)
			}
			if got := header.Get("Authorization"); got != "Bearer "+testKey {
				t.Errorf("Authorization: got %q, want the bearer key", got)
			}
			if header.Get("Api-Key") != "azure-key" || header.Get("X-Team") != "blue" {
				t.Errorf("headers: got api-key %q x-team %q, want the configured ones", header.Get("Api-Key"), header.Get("X-Team"))
			}
			if got := header.Get("Accept"); got != "text/event-stream" {
				t.Errorf("Accept: got %q, want text/event-stream", got)
			}
			if got := header.Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type: got %q, want application/json", got)
			}
			pu, _ := url.Parse(rawURL)
			if pu.Path != "/v1/chat/completions" || pu.Query().Get("api-version") != "2024-10-21" {
				t.Errorf("url: got %s, want /v1/chat/completions?api-version=2024-10-21", rawURL)
			}
		})
	}
}

func TestRequestExtraOnTheWire(t *testing.T) {
	u := newUpstream(t, providertest.SSE(roleChunk+finishChunk+doneLine))
	c := u.client(Config{})
	s, err := c.Stream(t.Context(), richRequest())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	providertest.Drain(t, s)
	b, _, _ := u.Last()
	body := string(b)
	// Extra members arrive byte for byte and in order, after the modeled ones.
	if i := strings.Index(body, `"parallel_tool_calls":false,"metadata":{"b": 1, "a": [1, 2]},"service_tier":"flex"}`); i < 0 {
		t.Errorf("body %s: want the Extra members unchanged, in order, at the end", body)
	}
	if strings.Count(body, `"stream":`) != 1 {
		t.Errorf("body %s: want one stream member", body)
	}
	if !strings.Contains(body, `"max_completion_tokens":100`) || strings.Contains(body, `"max_tokens"`) {
		t.Errorf("body %s: want max_completion_tokens kept and no max_tokens", body)
	}
}

func TestWriteString(t *testing.T) {
	tests := []string{"", "plain", "quote \" backslash \\ slash /", "ctl \x00\x01\x1f\t\r\n", "é日本🙂", "bad \xff utf8", "\u2028\u2029", "<html>&"}
	for _, s := range tests {
		t.Run(s, func(t *testing.T) { checkWriteString(t, s) })
	}
}

func checkWriteString(t *testing.T, s string) {
	var b bytes.Buffer
	writeString(&b, s)
	var got string
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%q encoded as %s: got %v, want valid JSON", s, b.Bytes(), err)
	}
	// encoding/json is the reference: it also replaces each invalid byte with U+FFFD.
	ref, _ := json.Marshal(s)
	var want string
	json.Unmarshal(ref, &want)
	if got != want {
		t.Errorf("round trip of %q: got %q, want %q", s, got, want)
	}
}

func FuzzWriteString(f *testing.F) {
	f.Add("a\"b\\c\x00\xff\u2028")
	f.Fuzz(checkWriteString)
}
