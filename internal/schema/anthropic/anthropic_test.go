package anthropic

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEventsAreTheWire decodes events recorded from Anthropic
// (internal/provider/anthropic/testdata/anthropic-*.sse, padding trimmed) into their types
// and encodes them again: the bytes are the same.
func TestEventsAreTheWire(t *testing.T) {
	tests := []struct {
		rec string
		v   any
	}{
		{`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
			&ContentBlockStartEvent{ContentBlock: &ThinkingBlock{}}},
		{`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
			&ContentBlockStartEvent{ContentBlock: &TextBlock{}}},
		{`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"This"}}`,
			&ContentBlockDeltaEvent{Delta: &ThinkingDelta{}}},
		{`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EvMCCkYICxgCKkCHP2c=="}}`,
			&ContentBlockDeltaEvent{Delta: &SignatureDelta{}}},
		{`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"locati"}}`,
			&ContentBlockDeltaEvent{Delta: &InputJSONDelta{}}},
		{`{"type":"content_block_stop","index":1}`, &ContentBlockStopEvent{}},
		{`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":87}}`,
			&MessageDeltaEvent{}},
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, &ErrorResponse{}},
		{`{"type":"message_stop"}`, &TypeEvent{}},
	}
	for _, tt := range tests {
		if err := json.Unmarshal([]byte(tt.rec), tt.v); err != nil {
			t.Fatalf("%s: %v", tt.rec, err)
		}
		if got := mustMarshal(t, tt.v); got != tt.rec {
			t.Errorf("got\n%s\nwant\n%s", got, tt.rec)
		}
	}
}

// TestRequestRoundTrip decodes a client's request with every shape the dialect must take
// (system as blocks with cache_control, string content, tool_use and tool_result, thinking
// with its signature, redacted_thinking, an image) and encodes it again unchanged: what the
// gateway passes on is what the client wrote.
func TestRequestRoundTrip(t *testing.T) {
	body := `{"model":"claude-sonnet-4-5","max_tokens":1024,` +
		`"system":[{"type":"text","text":"Be <brief> & kind.","cache_control":{"type":"ephemeral","ttl":"1h"}}],` +
		`"messages":[{"role":"user","content":"What is the weather?"},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"Use the tool.","signature":"c2ln"},{"type":"redacted_thinking","data":"b3BhcXVl"},` +
		`{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"18C","is_error":true},` +
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}},{"type":"text","text":"thanks","cache_control":{"type":"ephemeral"}}]}],` +
		`"tools":[{"name":"get_weather","description":"Weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}}},"cache_control":{"type":"ephemeral"}},` +
		`{"type":"web_search_20250305","name":"web_search"}],` +
		`"tool_choice":{"type":"auto","disable_parallel_tool_use":true},"thinking":{"type":"enabled","budget_tokens":2048},` +
		`"stop_sequences":["END"],"temperature":1,"metadata":{"user_id":"u1"},"stream":true}`
	var req MessagesRequest
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	if got := mustMarshal(t, &req); got != body {
		t.Errorf("got\n%s\nwant\n%s", got, body)
	}
	res := req.Messages[2].Content[0].Content
	if want := (Content{{Type: "text", Text: "18C"}}); !reflect.DeepEqual(res, want) {
		t.Errorf("tool_result content: got %+v, want %+v", res, want)
	}
	if got := string(req.System[0].CacheControl); got != `{"type":"ephemeral","ttl":"1h"}` {
		t.Errorf("cache_control: got %s, want the client's bytes", got)
	}
}

func TestContent(t *testing.T) {
	tests := []struct {
		name string
		c    Content
		want string
	}{
		{"one text block is a string", Content{{Type: "text", Text: "hi"}}, `"hi"`},
		{"one text block with cache_control stays a block", Content{{Type: "text", Text: "hi", CacheControl: json.RawMessage(`{"type":"ephemeral"}`)}},
			`[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]`},
		{"two blocks", Content{{Type: "text", Text: "a"}, {Type: "text", Text: "b"}}, `[{"type":"text","text":"a"},{"type":"text","text":"b"}]`},
	}
	for _, tt := range tests {
		if got := mustMarshal(t, tt.c); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
	var c Content
	if err := json.Unmarshal([]byte(`{"type":"text"}`), &c); err == nil || !strings.Contains(err.Error(), "neither a string nor a list") {
		t.Errorf("an object: got %v, want an error", err)
	}
	if err := json.Unmarshal([]byte(`null`), &c); err != nil || c != nil {
		t.Errorf("null: got %v, %v; want no blocks", c, err)
	}
}

// TestUsageDelta: message_delta's usage as current API versions send it, every member set,
// in the API's order; a reader tells an absent member from zero.
func TestUsageDelta(t *testing.T) {
	u := Usage{InputTokens: 10, CacheReadInputTokens: 5, OutputTokens: 7}
	want := `{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":5,"output_tokens":7}`
	if got := mustMarshal(t, u.Delta()); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	var d DeltaUsage
	if err := json.Unmarshal([]byte(`{"output_tokens":3}`), &d); err != nil || d.InputTokens != nil || d.OutputTokens == nil || *d.OutputTokens != 3 {
		t.Errorf("got %+v, %v; want only output_tokens", d, err)
	}
}

// A thinking block handed back keeps its thinking member even empty (display "omitted"),
// and usage carries cache_creation, in the API's order, only when it is known.
func TestThinkingAndCacheCreation(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"empty thinking", Content{{Type: "thinking", Signature: "c2ln"}}, `[{"type":"thinking","thinking":"","signature":"c2ln"}]`},
		{"redacted", Content{{Type: "redacted_thinking", Data: "ZGF0YQ=="}}, `[{"type":"redacted_thinking","data":"ZGF0YQ=="}]`},
		{"usage without the split", Usage{InputTokens: 1, CacheCreationInputTokens: 5, OutputTokens: 2},
			`{"input_tokens":1,"cache_creation_input_tokens":5,"cache_read_input_tokens":0,"output_tokens":2}`},
		{"usage with the split", Usage{InputTokens: 1, CacheCreationInputTokens: 5, CacheCreation: &CacheCreation{Ephemeral5mInputTokens: 2, Ephemeral1hInputTokens: 3}, OutputTokens: 2},
			`{"input_tokens":1,"cache_creation_input_tokens":5,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":2,"ephemeral_1h_input_tokens":3},"output_tokens":2}`},
		{"delta with the split", Usage{CacheCreation: &CacheCreation{Ephemeral1hInputTokens: 3}}.Delta(),
			`{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":3},"output_tokens":0}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustMarshal(t, tt.v); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
	var u DeltaUsage
	rec := `{"input_tokens":43,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":7},"output_tokens":1,"service_tier":"standard"}`
	if err := json.Unmarshal([]byte(rec), &u); err != nil || u.CacheCreation == nil || u.CacheCreation.Ephemeral1hInputTokens != 7 {
		t.Errorf("got %+v %v, want the recorded 1h tokens", u, err)
	}
}
