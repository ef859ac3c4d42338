package openai

import (
	"bytes"
	"encoding/json"
	"testing"
)

// encode is what a writer of these types does: no HTML escaping, no trailing newline.
func encode(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// TestChunkIsTheWire decodes chunks recorded from OpenAI
// (internal/provider/openai/testdata/openai-chat-*.sse) and encodes them again: the bytes are
// the same, so the types carry every member, in OpenAI's order, null where OpenAI says null.
func TestChunkIsTheWire(t *testing.T) {
	for _, rec := range []string{
		// The role chunk of a stream with logprobs: content "", refusal null.
		`{"id":"chatcmpl-ABfw5EzoqmfXjnnsXY7Yd8OC6tb3c","object":"chat.completion.chunk","created":1727346173,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_5050236cbd","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":{"content":[],"refusal":null},"finish_reason":null}]}`,
		`{"id":"chatcmpl-ABfw5EzoqmfXjnnsXY7Yd8OC6tb3c","object":"chat.completion.chunk","created":1727346173,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_5050236cbd","choices":[{"index":0,"delta":{"content":"Foo"},"logprobs":{"content":[{"token":"Foo","logprob":-0.0025094282,"bytes":[70,111,111],"top_logprobs":[]}],"refusal":null},"finish_reason":null}]}`,
		`{"id":"chatcmpl-ABfw8AOXnoa2kzy11vVTSjuQhHCQr","object":"chat.completion.chunk","created":1727346176,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_7568d46099","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\""}}]},"logprobs":null,"finish_reason":null}]}`,
		`{"id":"chatcmpl-ABfw031mOJeYCSHe4yI2ZjOA6kMJL","object":"chat.completion.chunk","created":1727346168,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_5050236cbd","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`,
		`{"id":"chatcmpl-ABfw3Oqj8RD0z6aJiiX37oTjV2HFh","object":"chat.completion.chunk","created":1727346171,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_7568d46099","choices":[],"usage":{"prompt_tokens":79,"completion_tokens":1,"total_tokens":80,"completion_tokens_details":{"reasoning_tokens":0}}}`,
	} {
		var c ChatCompletionChunk
		if err := json.Unmarshal([]byte(rec), &c); err != nil {
			t.Fatal(err)
		}
		if got := encode(t, c); string(got) != rec {
			t.Errorf("got\n%s\nwant\n%s", got, rec)
		}
	}
}

// TestWriterForms: the forms a writer must be able to say, which OpenAI sends.
func TestWriterForms(t *testing.T) {
	stop, body := "stop", "Hi <b> & bye"
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"refusal role chunk: content null, refusal empty",
			ChunkDelta{Role: "assistant", Content: json.RawMessage("null"), Refusal: json.RawMessage(`""`)},
			`{"role":"assistant","content":null,"refusal":""}`},
		{"tool call first fragment",
			ToolCallDelta{Index: 0, ID: "call_1", Type: "function", Function: FunctionDelta{Name: "f"}},
			`{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}`},
		{"finish", ChunkChoice{Index: 1, FinishReason: &stop}, `{"index":1,"delta":{},"logprobs":null,"finish_reason":"stop"}`},
		{"message of an answer: refusal null, HTML unescaped",
			AssistantMessage{Role: "assistant", Content: &body},
			`{"role":"assistant","content":"Hi <b> & bye","refusal":null}`},
		{"tool-call-only message", AssistantMessage{Role: "assistant", ToolCalls: []ToolCall{{ID: "c", Type: "function", Function: FunctionCall{Name: "f", Arguments: "{}"}}}},
			`{"role":"assistant","content":null,"refusal":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}`},
		{"usage with cache details", Usage{PromptTokens: 9, CompletionTokens: 3, TotalTokens: 12, PromptTokensDetails: &PromptTokensDetails{CachedTokens: 4}},
			`{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":0}}`},
		{"error", ErrorResponse{Error{Message: "no", Type: "invalid_request_error", Code: json.RawMessage(`"model_not_found"`)}},
			`{"error":{"message":"no","type":"invalid_request_error","param":null,"code":"model_not_found"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := encode(t, tt.v); string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestText: what compatible servers send for a string decodes to its text.
func TestText(t *testing.T) {
	tests := []struct {
		in, want string
		err      bool
	}{
		{in: `"plain"`, want: "plain"},
		{in: `"esc \"q\" \u00e9"`, want: `esc "q" é`},
		{in: `null`, want: ""},
		{in: `[{"type":"text","text":"a"},{"type":"text","text":"b"}]`, want: "ab"},
		{in: `12`, want: ""},
		{in: `[1]`, err: true},
	}
	for _, tt := range tests {
		var v struct {
			T Text `json:"t"`
		}
		err := json.Unmarshal([]byte(`{"t":`+tt.in+`}`), &v)
		if (err != nil) != tt.err || string(v.T) != tt.want {
			t.Errorf("%s: got %q, %v; want %q, error %v", tt.in, v.T, err, tt.want, tt.err)
		}
	}
	if got := encode(t, FunctionDelta{Arguments: `{"a":"<"}`}); string(got) != `{"arguments":"{\"a\":\"<\"}"}` {
		t.Errorf("Text encodes as %s, want a plain JSON string", got)
	}
}

// TestRaw: null is nil, anything else a copy that outlives the decoded bytes.
func TestRaw(t *testing.T) {
	var v struct {
		R Raw `json:"r"`
	}
	if err := json.Unmarshal([]byte(`{"r":null}`), &v); err != nil || v.R != nil {
		t.Fatalf("null: got %q, %v; want nil", v.R, err)
	}
	in := []byte(`{"r":{"content":[]}}`)
	if err := json.Unmarshal(in, &v); err != nil {
		t.Fatal(err)
	}
	copy(in, bytes.Repeat([]byte("x"), len(in)))
	if string(v.R) != `{"content":[]}` {
		t.Errorf("got %q after the input changed, want its own copy", v.R)
	}
}
