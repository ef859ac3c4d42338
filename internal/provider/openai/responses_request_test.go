package openai

import (
	"encoding/json"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

func userText(s string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: s}}, Plain: true}
}

func textMsg(role llm.Role, s string) llm.Message {
	return llm.Message{Role: role, Parts: []llm.Part{{Type: llm.PartText, Text: s}}, Plain: true}
}

func TestEncodeResponsesRequest(t *testing.T) {
	hi := []llm.Message{userText("hi")}
	tests := []struct {
		name string
		req  llm.Request
		want string
	}{
		{name: "minimal: store false, streamed", req: llm.Request{Model: "gpt-4o", Messages: hi},
			want: `{"model":"gpt-4o","input":[{"role":"user","content":"hi"}],"store":false,"stream":true}`},
		{name: "multi-turn with function calls, outputs, images and reasoning", req: llm.Request{Model: "gpt-5", Messages: []llm.Message{
			textMsg(llm.RoleSystem, "Be brief."),
			{Role: llm.RoleUser, Parts: []llm.Part{
				{Type: llm.PartText, Text: "What is in \"this\" image?\n"},
				{Type: llm.PartImage, URL: "data:image/png;base64,AAAA", Detail: "low"},
				{Type: llm.PartImage, URL: "https://example.com/cat.png"},
			}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartText, Text: "Let me look."}},
				Reasoning: []llm.Reasoning{
					{ID: "rs_1", Text: "**Looking**", Encrypted: "gAAA1"},
					{ID: "rs_stored", Text: "dropped: no encrypted content"},
					{Encrypted: "gAAA2"},
				},
				ToolCalls: []llm.ToolCall{
					{ID: "call_1", Name: "look", Arguments: `{"x":1}`},
					{ID: "call_2", Name: "zoom", Arguments: `{}`},
				}},
			{Role: llm.RoleTool, ToolCallID: "call_1", Parts: []llm.Part{{Type: llm.PartText, Text: "a cat"}}, Plain: true},
			{Role: llm.RoleTool, ToolCallID: "call_2", Parts: []llm.Part{{Type: llm.PartText, Text: "big "}, {Type: llm.PartText, Text: "cat"}}},
			textMsg(llm.RoleAssistant, "A big cat."),
			textMsg(llm.RoleDeveloper, "Now answer in French."),
			{Role: llm.RoleUser, Name: "bob", Parts: []llm.Part{{Type: llm.PartText, Text: "Merci"}}},
		}},
			want: `{"model":"gpt-5","instructions":"Be brief.","input":[` +
				`{"role":"user","content":[{"type":"input_text","text":"What is in \"this\" image?\n"},{"type":"input_image","image_url":"data:image/png;base64,AAAA","detail":"low"},{"type":"input_image","image_url":"https://example.com/cat.png","detail":"auto"}]},` +
				`{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"**Looking**"}],"encrypted_content":"gAAA1"},` +
				`{"type":"reasoning","summary":[],"encrypted_content":"gAAA2"},` +
				`{"role":"assistant","content":"Let me look."},` +
				`{"type":"function_call","call_id":"call_1","name":"look","arguments":"{\"x\":1}"},` +
				`{"type":"function_call","call_id":"call_2","name":"zoom","arguments":"{}"},` +
				`{"type":"function_call_output","call_id":"call_1","output":"a cat"},` +
				`{"type":"function_call_output","call_id":"call_2","output":"big cat"},` +
				`{"role":"assistant","content":"A big cat."},` +
				`{"role":"developer","content":"Now answer in French."},` +
				`{"role":"user","content":[{"type":"input_text","text":"Merci"}]}` +
				`],"store":false,"stream":true}`},
		{name: "leading system and developer messages join into instructions", req: llm.Request{Model: "m", Messages: []llm.Message{
			textMsg(llm.RoleSystem, "One."),
			{Role: llm.RoleDeveloper, Parts: []llm.Part{{Type: llm.PartText, Text: "Two, "}, {Type: llm.PartText, Text: "three."}}},
			userText("hi"),
			textMsg(llm.RoleSystem, "Later."),
		}},
			want: `{"model":"m","instructions":"One.\n\nTwo, three.","input":[{"role":"user","content":"hi"},{"role":"system","content":"Later."}],"store":false,"stream":true}`},
		{name: "refusal and several text parts", req: llm.Request{Model: "m", Messages: []llm.Message{
			userText("hi"),
			{Role: llm.RoleAssistant, Refusal: "No."},
			{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartText, Text: "a"}, {Type: llm.PartText, Text: "b"}}, Refusal: "No."},
			{Role: llm.RoleAssistant},
			{Role: llm.RoleTool, ToolCallID: "c", Parts: []llm.Part{{Type: llm.PartText, Text: "see"}, {Type: llm.PartImage, URL: "https://x/y.png", Detail: "high"}}},
		}},
			want: `{"model":"m","input":[{"role":"user","content":"hi"},` +
				`{"role":"assistant","content":[{"type":"refusal","refusal":"No."}]},` +
				`{"role":"assistant","content":[{"type":"output_text","text":"a"},{"type":"output_text","text":"b"},{"type":"refusal","refusal":"No."}]},` +
				`{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"see"},{"type":"input_image","image_url":"https://x/y.png","detail":"high"}]}` +
				`],"store":false,"stream":true}`},
		{name: "tools: strict false unless asked, parameters required", req: llm.Request{Model: "m", Messages: hi, Tools: []llm.Tool{
			{Name: "look", Description: "Look.", Parameters: json.RawMessage(`{"type":"object","properties":{"x":{"type":"integer"}}}`)},
			{Name: "now"},
			{Name: "s", Parameters: json.RawMessage(`{"type":"object"}`), Strict: ptr(true)},
		}, ToolChoice: json.RawMessage(`"required"`)},
			want: `{"model":"m","input":[{"role":"user","content":"hi"}],"tools":[` +
				`{"type":"function","name":"look","description":"Look.","parameters":{"type":"object","properties":{"x":{"type":"integer"}}},"strict":false},` +
				`{"type":"function","name":"now","parameters":{"type":"object","properties":{}},"strict":false},` +
				`{"type":"function","name":"s","parameters":{"type":"object"},"strict":true}],` +
				`"tool_choice":"required","store":false,"stream":true}`},
		{name: "previous response, include, metadata, user, store", req: llm.Request{Model: "m", Messages: hi,
			PreviousResponseID: "resp_1", Include: []string{"reasoning.encrypted_content"}, Store: ptr(true),
			Metadata: json.RawMessage(`{"b":"1","a":"2"}`), User: "u1", Temperature: ptr(0.2), TopP: ptr(0.9)},
			want: `{"model":"m","input":[{"role":"user","content":"hi"}],"temperature":0.2,"top_p":0.9,"user":"u1","metadata":{"b":"1","a":"2"},` +
				`"previous_response_id":"resp_1","store":true,"include":["reasoning.encrypted_content"],"stream":true}`},
		{name: "store false said explicitly", req: llm.Request{Model: "m", Messages: hi, Store: ptr(false)},
			want: `{"model":"m","input":[{"role":"user","content":"hi"}],"store":false,"stream":true}`},
		{name: "max_completion_tokens wins over max_tokens", req: llm.Request{Model: "m", Messages: hi, MaxTokens: ptr(50), MaxCompletionTokens: ptr(100)},
			want: `{"model":"m","input":[{"role":"user","content":"hi"}],"max_output_tokens":100,"store":false,"stream":true}`},
		{name: "max_tokens under the floor is raised to 16", req: llm.Request{Model: "m", Messages: hi, MaxTokens: ptr(1)},
			want: `{"model":"m","input":[{"role":"user","content":"hi"}],"max_output_tokens":16,"store":false,"stream":true}`},
		{name: "json_schema response format and verbosity become text", req: llm.Request{Model: "m", Messages: hi,
			ResponseFormat: json.RawMessage(`{"type":"json_schema","json_schema":{"name":"w","description":"d","schema":{"type":"object"},"strict":true}}`),
			Extra:          []llm.Field{{Name: "verbosity", Value: json.RawMessage(`"low"`)}, {Name: "text", Value: json.RawMessage(`{"verbosity":"high"}`)}}},
			want: `{"model":"m","input":[{"role":"user","content":"hi"}],"text":{"format":{"type":"json_schema","name":"w","description":"d","schema":{"type":"object"},"strict":true},"verbosity":"low"},"store":false,"stream":true}`},
		{name: "json_object response format", req: llm.Request{Model: "m", Messages: hi, ResponseFormat: json.RawMessage(`{"type":"json_object"}`)},
			want: `{"model":"m","input":[{"role":"user","content":"hi"}],"text":{"format":{"type":"json_object"}},"store":false,"stream":true}`},
		{name: "reasoning effort; Chat-only extras dropped, others passed in order", req: llm.Request{Model: "o4", Messages: hi, Seed: ptr(int64(1)), Stop: []string{"x"}, Logprobs: true,
			Extra: []llm.Field{
				{Name: "reasoning_effort", Value: json.RawMessage(`"high"`)},
				{Name: "parallel_tool_calls", Value: json.RawMessage(`false`)},
				{Name: "frequency_penalty", Value: json.RawMessage(`0.5`)},
				{Name: "logit_bias", Value: json.RawMessage(`{"1":2}`)},
				{Name: "stream", Value: json.RawMessage(`false`)},
				{Name: "reasoning", Value: json.RawMessage(`{"effort":"low"}`)},
				{Name: "service_tier", Value: json.RawMessage(`"flex"`)},
				{Name: "text", Value: json.RawMessage(`{"verbosity":"high"}`)},
			}},
			want: `{"model":"o4","input":[{"role":"user","content":"hi"}],"store":false,"reasoning":{"effort":"high"},"stream":true,` +
				`"parallel_tool_calls":false,"service_tier":"flex","text":{"verbosity":"high"}}`},
		{name: "a Responses-shaped reasoning extra passes when no reasoning_effort", req: llm.Request{Model: "o4", Messages: hi,
			Extra: []llm.Field{{Name: "reasoning", Value: json.RawMessage(`{"effort":"low","summary":"auto"}`)}}},
			want: `{"model":"o4","input":[{"role":"user","content":"hi"}],"store":false,"stream":true,"reasoning":{"effort":"low","summary":"auto"}}`},
		{name: "n of 1 is fine", req: llm.Request{Model: "m", Messages: hi, N: 1},
			want: `{"model":"m","input":[{"role":"user","content":"hi"}],"store":false,"stream":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := encodeResponsesRequest(&tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			if !json.Valid(got) {
				t.Error("got invalid JSON")
			}
		})
	}
}

func TestResponsesToolChoice(t *testing.T) {
	tests := []struct{ in, want string }{
		{`"auto"`, `"auto"`},
		{`"none"`, `"none"`},
		{`"required"`, `"required"`},
		{`{"type":"function","function":{"name":"look"}}`, `{"type":"function","name":"look"}`},
		{` {"type":"custom","custom":{"name":"grep"}} `, `{"type":"custom","name":"grep"}`},
		{`{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"a"}},{"type":"web_search_preview"}]}}`,
			`{"type":"allowed_tools","mode":"auto","tools":[{"type":"function","name":"a"},{"type":"web_search_preview"}]}`},
		// Already in Responses terms, or a hosted tool: unchanged.
		{`{"type":"function","name":"look"}`, `{"type":"function","name":"look"}`},
		{`{"type":"file_search"}`, `{"type":"file_search"}`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			req := &llm.Request{Model: "m", Messages: []llm.Message{userText("hi")}, ToolChoice: json.RawMessage(tt.in)}
			got, err := encodeResponsesRequest(req)
			if err != nil {
				t.Fatal(err)
			}
			want := `{"model":"m","input":[{"role":"user","content":"hi"}],"tool_choice":` + tt.want + `,"store":false,"stream":true}`
			if string(got) != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestEncodeResponsesRequestErrors(t *testing.T) {
	tests := []struct {
		name string
		req  llm.Request
		kind llm.Kind
	}{
		{"n > 1", llm.Request{Model: "m", N: 2}, llm.Unsupported},
		{"invalid tool_choice", llm.Request{Model: "m", ToolChoice: json.RawMessage(`{`)}, llm.Internal},
		{"invalid response_format", llm.Request{Model: "m", ResponseFormat: json.RawMessage(`{"type":`)}, llm.Internal},
		{"invalid parameters", llm.Request{Model: "m", Tools: []llm.Tool{{Name: "t", Parameters: json.RawMessage(`[`)}}}, llm.Internal},
		{"invalid extra", llm.Request{Model: "m", Extra: []llm.Field{{Name: "x", Value: json.RawMessage(`nul`)}}}, llm.Internal},
		{"invalid reasoning_effort", llm.Request{Model: "m", Extra: []llm.Field{{Name: "reasoning_effort", Value: json.RawMessage(`hi`)}}}, llm.Internal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := encodeResponsesRequest(&tt.req)
			if k := llm.KindOf(err); k != tt.kind {
				t.Errorf("got %v (kind %v), want kind %v", err, k, tt.kind)
			}
		})
	}
}
