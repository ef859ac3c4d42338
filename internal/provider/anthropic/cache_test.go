package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// cacheAnswer is an upstream's streamed answer whose usage reports cache reads and writes,
// 20 of the 50 written with the 1h TTL, as Anthropic's message_start carries them.
const cacheAnswer = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[]," +
	"\"usage\":{\"input_tokens\":10,\"cache_creation_input_tokens\":50,\"cache_read_input_tokens\":100,\"cache_creation\":{\"ephemeral_5m_input_tokens\":30,\"ephemeral_1h_input_tokens\":20},\"output_tokens\":1,\"service_tier\":\"standard\"}}}\n\n" +
	textStart + textDelta + blockStop + msgDelta + msgStop

// sendCached streams req to an upstream that answers cacheAnswer, and returns the body it
// got, decoded, and the usage the stream reported.
func sendCached(t *testing.T, req *llm.Request) (map[string]any, *llm.Usage) {
	t.Helper()
	_, m, u := sendCachedRaw(t, req)
	return m, u
}

// sendCachedRaw is sendCached with the body's bytes as well.
func sendCachedRaw(t *testing.T, req *llm.Request) ([]byte, map[string]any, *llm.Usage) {
	t.Helper()
	u := newUpstream(t, providertest.SSE(cacheAnswer))
	s, err := u.client(Config{}).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, end := providertest.Drain(t, s)
	wantEOF(t, end)
	var usage *llm.Usage
	for _, e := range evs {
		if e.Type == llm.EvUsage {
			usage = e.Usage
		}
	}
	if usage == nil {
		t.Fatal("no usage event")
	}
	body, _, _ := u.Last()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("upstream body %s: %v", body, err)
	}
	return body, m, usage
}

func mark(ttl string) *llm.Cache { return &llm.Cache{TTL: ttl} }

func cachedText(role llm.Role, s string, c *llm.Cache) llm.Message {
	return llm.Message{Role: role, Parts: []llm.Part{{Type: llm.PartText, Text: s, Cache: c}}}
}

// TestEncodeCache: a translated request's breakpoints reach the upstream as cache_control on
// the blocks they were on, with their ttl; over four, the last four go and the usage counts
// the others; a 1h after a shorter one is made 5m, as Anthropic requires.
func TestEncodeCache(t *testing.T) {
	tool := func(c *llm.Cache) llm.Tool { w := weatherTool; w.Cache = c; return w }
	call := func(c *llm.Cache) llm.Message {
		return llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "toolu_1", Name: "get_weather", Arguments: `{"city":"Paris"}`, Cache: c}}}
	}
	result := func(own, part *llm.Cache) llm.Message {
		return llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_1", Cache: own,
			Parts: []llm.Part{{Type: llm.PartText, Text: "18C"}, {Type: llm.PartText, Text: "sunny", Cache: part}}}
	}
	tests := []struct {
		name    string
		tools   []llm.Tool
		msgs    []llm.Message
		want    []string
		dropped int
	}{
		{"tool, system, text and image", []llm.Tool{tool(mark("1h"))}, []llm.Message{
			cachedText(llm.RoleSystem, "sys", mark("1h")),
			{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "look", Cache: mark("")},
				{Type: llm.PartImage, URL: "data:image/png;base64,iVBO", Cache: mark("5m")}}}},
			[]string{"tools.0=1h", "system.0=1h", "messages.0.content.0=-", "messages.0.content.1=5m"}, 0},
		{"document, tool_use, tool_result and its content", nil, []llm.Message{
			{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartFile, MediaType: "application/pdf", Data: "JVBERg==", Cache: mark("")}}},
			call(mark("")), result(mark("5m"), mark(""))},
			[]string{"messages.0.content.0=-", "messages.1.content.0=-", "messages.2.content.0.content.1=-", "messages.2.content.0=5m"}, 0},
		{"assistant text", nil, []llm.Message{text(llm.RoleUser, "q"), cachedText(llm.RoleAssistant, "a", mark("5m")), text(llm.RoleUser, "more")},
			[]string{"messages.1.content.0=5m"}, 0},
		{"none", []llm.Tool{weatherTool}, []llm.Message{text(llm.RoleSystem, "s"), text(llm.RoleUser, "q")}, nil, 0},
		{"five keep the last four", []llm.Tool{tool(mark("1h"))}, []llm.Message{
			cachedText(llm.RoleSystem, "sys", mark("1h")), cachedText(llm.RoleUser, "q", mark("")), call(mark("")), result(mark("5m"), nil)},
			[]string{"system.0=1h", "messages.0.content.0=-", "messages.1.content.0=-", "messages.2.content.0=5m"}, 1},
		{"six keep the last four", []llm.Tool{tool(mark(""))}, []llm.Message{
			cachedText(llm.RoleSystem, "sys", mark("")), cachedText(llm.RoleUser, "q", mark("")), call(mark("")), result(mark(""), mark(""))},
			[]string{"messages.0.content.0=-", "messages.1.content.0=-", "messages.2.content.0.content.1=-", "messages.2.content.0=-"}, 2},
		{"1h after 5m is 5m", nil, []llm.Message{cachedText(llm.RoleSystem, "s", mark("5m")), cachedText(llm.RoleUser, "q", mark("1h"))},
			[]string{"system.0=5m", "messages.0.content.0=5m"}, 0},
		{"1h after the default is 5m", []llm.Tool{tool(mark(""))}, []llm.Message{cachedText(llm.RoleUser, "q", mark("1h"))},
			[]string{"tools.0=-", "messages.0.content.0=5m"}, 0},
		{"1h before 5m stays", []llm.Tool{tool(mark("1h"))}, []llm.Message{cachedText(llm.RoleUser, "q", mark("5m"))},
			[]string{"tools.0=1h", "messages.0.content.0=5m"}, 0},
		{"a later system message goes to system with its mark, before the messages", nil, []llm.Message{
			cachedText(llm.RoleUser, "q", mark("5m")), cachedText(llm.RoleSystem, "env", mark("1h"))},
			[]string{"system.0=1h", "messages.0.content.0=5m"}, 0},
		{"an empty text part's mark is not sent", nil, []llm.Message{cachedText(llm.RoleUser, "", mark("")), text(llm.RoleUser, "q")}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &llm.Request{Model: "claude-sonnet-4-5", Tools: tt.tools, Messages: tt.msgs}
			body, usage := sendCached(t, req)
			got := providertest.CacheSites(body)
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("got cache_control at %v, want %v", got, tt.want)
			}
			if usage.CacheDropped != tt.dropped {
				t.Errorf("got CacheDropped %d, want %d", usage.CacheDropped, tt.dropped)
			}
		})
	}
}

// The upstream's cache writes reach llm.Usage with their 1h part, streamed or not; the
// total stays cache_creation_input_tokens, all of it in the prompt.
func TestUsageCacheCreation(t *testing.T) {
	_, u := sendCached(t, testRequest())
	want := llm.Usage{PromptTokens: 160, CompletionTokens: 7, TotalTokens: 167, CachedTokens: 100, CacheWriteTokens: 50, CacheWrite1hTokens: 20}
	if *u != want {
		t.Errorf("stream: got %+v, want %+v", *u, want)
	}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","stop_sequence":null,`+
			`"usage":{"input_tokens":10,"cache_creation_input_tokens":50,"cache_read_input_tokens":100,"cache_creation":{"ephemeral_5m_input_tokens":30,"ephemeral_1h_input_tokens":20},"output_tokens":7}}`)
	})
	req := testRequest()
	req.Plain = true
	for i := 0; i < 6; i++ { // six breakpoints: the plain answer counts the two dropped too
		req.Messages = append(req.Messages, cachedText(llm.RoleUser, "q", mark("")))
	}
	s, err := up.client(Config{}).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, end := providertest.Drain(t, s)
	wantEOF(t, end)
	want.CacheDropped = 2
	if got := assemble(evs).Usage; got != want {
		t.Errorf("plain: got %+v, want %+v", got, want)
	}
}

// A Messages client's own body goes with its markers as they came; one with more than four
// loses the earliest, in prompt order, and the usage counts them. One that only quotes
// cache_control in its text is left whole.
func TestNativeCache(t *testing.T) {
	cc := `"cache_control":{"type":"ephemeral"}`
	cc1h := `"cache_control":{"type":"ephemeral","ttl":"1h"}`
	six := `{"model":"m","max_tokens":100,"tools":[{"name":"a","input_schema":{"type":"object"},` + cc1h + `},{"name":"b","input_schema":{"type":"object","properties":{"n":{"type":"number","minimum":1.50}}},` + cc + `}],` +
		`"system":[{"type":"text","text":"<s> & t",` + cc + `}],` +
		`"messages":[{"role":"user","content":[{"type":"text","text":"q",` + cc + `}]},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"c2ln"},{"type":"tool_use","id":"toolu_1","name":"a","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"r",` + cc + `}],` + cc1h + `}]}]}`
	four := `{"model":"m","max_tokens":100,"system":[{"type":"text","text":"say \"cache_control\" \"cache_control\" \"cache_control\"",` + cc + `}],` +
		`"messages":[{"role":"user","content":[{"type":"text","text":"\"cache_control\"",` + cc1h + `}]}]}`
	tests := []struct {
		name    string
		body    string
		want    []string
		dropped int
	}{
		{"six", six, []string{"system.0=-", "messages.0.content.0=-", "messages.2.content.0.content.0=-", "messages.2.content.0=1h"}, 2},
		{"quoted, not marked", four, []string{"system.0=-", "messages.0.content.0=1h"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := testRequest()
			req.Native = &llm.Native{Wire: "anthropic", Body: json.RawMessage(tt.body)}
			raw, body, usage := sendCachedRaw(t, req)
			if got := providertest.CacheSites(body); strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("got cache_control at %v, want %v", got, tt.want)
			}
			if usage.CacheDropped != tt.dropped {
				t.Errorf("got CacheDropped %d, want %d", usage.CacheDropped, tt.dropped)
			}
			if tt.dropped == 0 && !bytes.Contains(raw, []byte(`"messages":[{"role":"user","content":[{"type":"text","text":"\"cache_control\"",`+cc1h+`}]}]`)) {
				t.Errorf("got %s, want the messages as they came", raw)
			}
			// What is not a marker goes as it came: a schema's number, a signature, the text.
			for _, s := range []string{`"minimum":1.50`, `"signature":"c2ln"`, `"<s> & t"`} {
				if strings.Contains(tt.body, s) && !bytes.Contains(raw, []byte(s)) {
					t.Errorf("got %s, want %s as it came", raw, s)
				}
			}
		})
	}
}

// Reasoning goes back to a Claude target when a Claude platform signed it (Anthropic,
// Bedrock: the same signatures) or the client's wire did not say; another format's opaque
// content is dropped. Redacted blocks are redacted_thinking; an empty thinking with its
// signature (display omitted) stays a thinking block; the old convention (no text, Wire "")
// is redacted.
func TestEncodeReasoning(t *testing.T) {
	req := &llm.Request{Model: "claude-sonnet-4-5", Messages: []llm.Message{
		text(llm.RoleUser, "q"),
		{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartText, Text: "a"}}, Reasoning: []llm.Reasoning{
			{Text: "t1", Encrypted: "EqQB/+==", Wire: "anthropic"},
			{Encrypted: "c2ln", Wire: "anthropic"},
			{Encrypted: "ZGF0YQ==", Redacted: true, Wire: "anthropic"},
			{Text: "t2", Encrypted: "YmVk", Wire: "bedrock"},
			{Encrypted: "cmVk", Redacted: true, Wire: "bedrock"},
			{Text: "summary", Encrypted: "gAAAA", Wire: "responses"},
			{Text: "thought", Encrypted: "Q2lR", Wire: "gemini"},
			{Encrypted: "b2xk", Redacted: true},
			{Text: "t3", Encrypted: "bGVn"},
		}},
		text(llm.RoleUser, "more")}}
	got, _, err := encodeRequest(req, 1024)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"assistant","content":[{"type":"thinking","thinking":"t1","signature":"EqQB/+=="},{"type":"thinking","thinking":"","signature":"c2ln"},` +
		`{"type":"redacted_thinking","data":"ZGF0YQ=="},{"type":"thinking","thinking":"t2","signature":"YmVk"},{"type":"redacted_thinking","data":"cmVk"},` +
		`{"type":"redacted_thinking","data":"b2xk"},{"type":"thinking","thinking":"t3","signature":"bGVn"},{"type":"text","text":"a"}]}`
	if !strings.Contains(string(got), want) {
		t.Errorf("got\n%s\nwant the assistant turn\n%s", got, want)
	}
}
