package anthropic

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

func ptr[T any](v T) *T { return &v }

func text(role llm.Role, s string) llm.Message {
	return llm.Message{Role: role, Parts: []llm.Part{{Type: llm.PartText, Text: s}}, Plain: true}
}

func toolMsg(id, s string) llm.Message {
	m := text(llm.RoleTool, s)
	m.ToolCallID = id
	return m
}

var weatherTool = llm.Tool{Name: "get_weather", Description: "Weather of a city.",
	Parameters: json.RawMessage(`{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}`)}

const weatherWire = `{"name":"get_weather","description":"Weather of a city.","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}`

func withTools(r llm.Request, choice string, extra ...llm.Field) llm.Request {
	r.Tools = []llm.Tool{weatherTool}
	if choice != "" {
		r.ToolChoice = json.RawMessage(choice)
	}
	r.Extra = extra
	return r
}

var hi = llm.Request{Model: "claude-sonnet-4-5", Messages: []llm.Message{text(llm.RoleUser, "hi")}}

var noParallel = llm.Field{Name: "parallel_tool_calls", Value: json.RawMessage(`false`)}

func effort(e string) llm.Field {
	return llm.Field{Name: "reasoning_effort", Value: json.RawMessage(`"` + e + `"`)}
}

func TestEncodeRequest(t *testing.T) {
	tests := []struct {
		name string
		req  llm.Request
		want string
	}{
		{"plain", hi, `{"model":"claude-sonnet-4-5","max_tokens":8192,"messages":[{"role":"user","content":"hi"}],"stream":true}`},
		{"claude 3 default max tokens", llm.Request{Model: "claude-3-5-haiku-20241022", Messages: hi.Messages},
			`{"model":"claude-3-5-haiku-20241022","max_tokens":4096,"messages":[{"role":"user","content":"hi"}],"stream":true}`},
		{"one system prompt is a string", llm.Request{Model: "claude-opus-4-1", Messages: []llm.Message{text(llm.RoleSystem, "Be brief."), text(llm.RoleUser, "hi")}},
			`{"model":"claude-opus-4-1","max_tokens":8192,"system":"Be brief.","messages":[{"role":"user","content":"hi"}],"stream":true}`},
		{"system and developer messages are text blocks, in order", llm.Request{Model: "claude-sonnet-4-5", Messages: []llm.Message{
			text(llm.RoleSystem, "Be brief."), text(llm.RoleUser, "hi"), text(llm.RoleAssistant, "Hello."),
			text(llm.RoleDeveloper, "Answer in French."), text(llm.RoleUser, "bye")}},
			`{"model":"claude-sonnet-4-5","max_tokens":8192,"system":[{"type":"text","text":"Be brief."},{"type":"text","text":"Answer in French."}],
			"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"Hello."},{"role":"user","content":"bye"}],"stream":true}`},
		{"multi-turn with tool calls and consecutive results", llm.Request{Model: "claude-sonnet-4-5", Tools: []llm.Tool{weatherTool}, Messages: []llm.Message{
			text(llm.RoleUser, "Weather in Paris and Oslo?"),
			{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartText, Text: "Checking."}}, ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "get_weather", Arguments: `{"city": "Paris"}`},
				{ID: "call_2", Name: "get_weather", Arguments: `{"city":"Oslo"}`}}},
			toolMsg("call_1", "18C"),
			toolMsg("call_2", "9C"),
			text(llm.RoleUser, "Thanks. And Rome?"),
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_3", Name: "get_weather", Arguments: `{"city":"Rome"}`}}},
			toolMsg("call_3", "25C")}},
			`{"model":"claude-sonnet-4-5","max_tokens":8192,"messages":[
			{"role":"user","content":"Weather in Paris and Oslo?"},
			{"role":"assistant","content":[{"type":"text","text":"Checking."},
				{"type":"tool_use","id":"call_1","name":"get_weather","input":{"city":"Paris"}},
				{"type":"tool_use","id":"call_2","name":"get_weather","input":{"city":"Oslo"}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"18C"},
				{"type":"tool_result","tool_use_id":"call_2","content":"9C"},
				{"type":"text","text":"Thanks. And Rome?"}]},
			{"role":"assistant","content":[{"type":"tool_use","id":"call_3","name":"get_weather","input":{"city":"Rome"}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_3","content":"25C"}]}],
			"tools":[` + weatherWire + `],"stream":true}`},
		{"tool results come first in their user turn", llm.Request{Model: "claude-sonnet-4-5", Messages: []llm.Message{
			text(llm.RoleUser, "Go."),
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call.1:x", Name: "ls", Arguments: ""}}},
			text(llm.RoleUser, "(note)"),
			{Role: llm.RoleTool, ToolCallID: "call.1:x"}}},
			`{"model":"claude-sonnet-4-5","max_tokens":8192,"messages":[
			{"role":"user","content":"Go."},
			{"role":"assistant","content":[{"type":"tool_use","id":"call_1_x","name":"ls","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1_x"},{"type":"text","text":"(note)"}]}],"stream":true}`},
		{"adjacent user messages merge, empty ones drop", llm.Request{Model: "claude-sonnet-4-5", Messages: []llm.Message{
			text(llm.RoleUser, "one"), text(llm.RoleUser, ""), text(llm.RoleUser, "two")}},
			`{"model":"claude-sonnet-4-5","max_tokens":8192,"messages":[{"role":"user","content":[{"type":"text","text":"one"},{"type":"text","text":"two"}]}],"stream":true}`},
		{"images by URL and base64", llm.Request{Model: "claude-sonnet-4-5", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
			{Type: llm.PartText, Text: "Same <cat> & dog?"},
			{Type: llm.PartImage, URL: "https://example.com/cat.jpg", Detail: "high"},
			{Type: llm.PartImage, URL: "data:image/PNG;base64,iVBORw0KGgo="}}}}},
			`{"model":"claude-sonnet-4-5","max_tokens":8192,"messages":[{"role":"user","content":[
			{"type":"text","text":"Same <cat> & dog?"},
			{"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}},
			{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}],"stream":true}`},
		{"tool without parameters", llm.Request{Model: "claude-sonnet-4-5", Messages: hi.Messages, Tools: []llm.Tool{{Name: "now"}}},
			`{"model":"claude-sonnet-4-5","max_tokens":8192,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"now","input_schema":{"type":"object","properties":{}}}],"stream":true}`},
		{"tool_choice absent", withTools(hi, ""), `{"model":"claude-sonnet-4-5","max_tokens":8192,"messages":[{"role":"user","content":"hi"}],"tools":[` + weatherWire + `],"stream":true}`},
		{"tool_choice auto", withTools(hi, `"auto"`), `{"model":"claude-sonnet-4-5","max_tokens":8192,"messages":[{"role":"user","content":"hi"}],"tools":[` + weatherWire + `],"tool_choice":{"type":"auto"},"stream":true}`},
		{"tool_choice required", withTools(hi, `"required"`), `{"model":"claude-sonnet-4-5","max_tokens":8192,"messages":[{"role":"user","content":"hi"}],"tools":[` + weatherWire + `],"tool_choice":{"type":"any"},"stream":true}`},
		{"tool_choice none", withTools(hi, `"none"`, noParallel), `{"model":"claude-sonnet-4-5","max_tokens":8192,"messages":[{"role":"user","content":"hi"}],"tools":[` + weatherWire + `],"tool_choice":{"type":"none"},"stream":true}`},
		{"tool_choice function", withTools(hi, `{"type":"function","function":{"name":"get_weather"}}`),
			`{"model":"claude-sonnet-4-5","max_tokens":8192,"messages":[{"role":"user","content":"hi"}],"tools":[` + weatherWire + `],"tool_choice":{"type":"tool","name":"get_weather"},"stream":true}`},
		{"parallel_tool_calls false alone", withTools(hi, "", noParallel),
			`{"model":"claude-sonnet-4-5","max_tokens":8192,"messages":[{"role":"user","content":"hi"}],"tools":[` + weatherWire + `],"tool_choice":{"type":"auto","disable_parallel_tool_use":true},"stream":true}`},
		{"parallel_tool_calls false with required", withTools(hi, `"required"`, noParallel),
			`{"model":"claude-sonnet-4-5","max_tokens":8192,"messages":[{"role":"user","content":"hi"}],"tools":[` + weatherWire + `],"tool_choice":{"type":"any","disable_parallel_tool_use":true},"stream":true}`},
		{"tool_choice without tools is left out", llm.Request{Model: "claude-sonnet-4-5", Messages: hi.Messages, ToolChoice: json.RawMessage(`"required"`)},
			`{"model":"claude-sonnet-4-5","max_tokens":8192,"messages":[{"role":"user","content":"hi"}],"stream":true}`},
		{"sampling, stop, user, dropped fields", llm.Request{Model: "claude-sonnet-4-5", Messages: hi.Messages,
			MaxCompletionTokens: ptr(300), Temperature: ptr(1.5), TopP: ptr(0.9), Stop: []string{"END", "\n", " "}, User: "user-42",
			Seed: ptr(int64(7)), N: 1, TopLogprobs: ptr(2), ResponseFormat: json.RawMessage(`{"type":"json_object"}`),
			Metadata: json.RawMessage(`{"a":"b"}`),
			Extra: []llm.Field{{Name: "frequency_penalty", Value: json.RawMessage(`0.5`)}, {Name: "top_k", Value: json.RawMessage(`40`)},
				{Name: "service_tier", Value: json.RawMessage(`"flex"`)}}},
			`{"model":"claude-sonnet-4-5","max_tokens":300,"messages":[{"role":"user","content":"hi"}],"stop_sequences":["END"],
			"temperature":1,"top_k":40,"metadata":{"user_id":"user-42"},"stream":true}`},
		{"top_p alone, max_tokens wins over max_completion_tokens", llm.Request{Model: "claude-sonnet-4-5", Messages: hi.Messages,
			MaxTokens: ptr(100), MaxCompletionTokens: ptr(200), TopP: ptr(0.5), Temperature: nil},
			`{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"hi"}],"top_p":0.5,"stream":true}`},
		{"temperature zero is sent", llm.Request{Model: "claude-sonnet-4-5", Messages: hi.Messages, Temperature: ptr(0.0)},
			`{"model":"claude-sonnet-4-5","max_tokens":8192,"messages":[{"role":"user","content":"hi"}],"temperature":0,"stream":true}`},
		{"reasoning effort without a limit", llm.Request{Model: "claude-sonnet-4-5", Messages: hi.Messages, Temperature: ptr(0.2),
			Extra: []llm.Field{effort("medium"), {Name: "top_k", Value: json.RawMessage(`5`)}}},
			`{"model":"claude-sonnet-4-5","max_tokens":12288,"messages":[{"role":"user","content":"hi"}],"thinking":{"type":"enabled","budget_tokens":4096},"stream":true}`},
		{"reasoning effort high under the client's limit", llm.Request{Model: "claude-sonnet-4-5", Messages: hi.Messages, MaxTokens: ptr(2000), TopP: ptr(0.97),
			Extra: []llm.Field{effort("high")}},
			`{"model":"claude-sonnet-4-5","max_tokens":2000,"messages":[{"role":"user","content":"hi"}],"thinking":{"type":"enabled","budget_tokens":1999},"top_p":0.97,"stream":true}`},
		{"reasoning effort with a limit too small for thinking", llm.Request{Model: "claude-sonnet-4-5", Messages: hi.Messages, MaxTokens: ptr(1000),
			Extra: []llm.Field{effort("low")}},
			`{"model":"claude-sonnet-4-5","max_tokens":1000,"messages":[{"role":"user","content":"hi"}],"stream":true}`},
		{"reasoning effort minimal is no thinking", llm.Request{Model: "claude-sonnet-4-5", Messages: hi.Messages, Extra: []llm.Field{effort("minimal")}},
			`{"model":"claude-sonnet-4-5","max_tokens":8192,"messages":[{"role":"user","content":"hi"}],"stream":true}`},
		{"a forced tool turns thinking off", withTools(hi, `"required"`, effort("high")),
			`{"model":"claude-sonnet-4-5","max_tokens":8192,"messages":[{"role":"user","content":"hi"}],"tools":[` + weatherWire + `],"tool_choice":{"type":"any"},"stream":true}`},
		{"reasoning handed back as thinking blocks", llm.Request{Model: "claude-sonnet-4-5", Tools: []llm.Tool{weatherTool}, Extra: []llm.Field{effort("low")}, Messages: []llm.Message{
			text(llm.RoleUser, "Weather in Paris?"),
			{Role: llm.RoleAssistant, Reasoning: []llm.Reasoning{
				{Text: "The user wants the weather.", Encrypted: "sig-1"},
				{Encrypted: "redacted-data", Redacted: true},
				{Text: "unsigned reasoning from another provider"}},
				ToolCalls: []llm.ToolCall{{ID: "toolu_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
			toolMsg("toolu_1", "18C")}},
			`{"model":"claude-sonnet-4-5","max_tokens":9216,"messages":[
			{"role":"user","content":"Weather in Paris?"},
			{"role":"assistant","content":[{"type":"thinking","thinking":"The user wants the weather.","signature":"sig-1"},
				{"type":"redacted_thinking","data":"redacted-data"},
				{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"18C"}]}],
			"tools":[` + weatherWire + `],"thinking":{"type":"enabled","budget_tokens":1024},"stream":true}`},
		{"assistant refusal and a multi-part tool result", llm.Request{Model: "claude-sonnet-4-5", Messages: []llm.Message{
			text(llm.RoleUser, "a"), {Role: llm.RoleAssistant, Refusal: "I can't help with that."},
			text(llm.RoleUser, "b"), {Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}}},
			{Role: llm.RoleTool, ToolCallID: "c1", Parts: []llm.Part{{Type: llm.PartText, Text: "x"}, {Type: llm.PartText, Text: "y"}}}}},
			`{"model":"claude-sonnet-4-5","max_tokens":8192,"messages":[
			{"role":"user","content":"a"},{"role":"assistant","content":"I can't help with that."},
			{"role":"user","content":"b"},{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"f","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]}]}],"stream":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := encodeRequest(&tt.req, ModelMaxTokens(tt.req.Model))
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			wantJSON(t, got, tt.want)
			again, _, _ := encodeRequest(&tt.req, ModelMaxTokens(tt.req.Model))
			if !bytes.Equal(got, again) {
				t.Error("two encodings differ, want deterministic output")
			}
		})
	}
}

// wantJSON compares two JSON documents as values, whatever their spacing.
func wantJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad test: want is not JSON: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		var cw bytes.Buffer
		json.Compact(&cw, []byte(want))
		t.Errorf("got\n%s\nwant\n%s", got, cw.Bytes())
	}
}

func TestEncodeRequestRefuses(t *testing.T) {
	tests := []struct {
		name  string
		req   llm.Request
		param string
		msg   string
		kind  llm.Kind // Unsupported when another provider may serve the request
	}{
		{"n > 1", llm.Request{Model: "m", Messages: hi.Messages, N: 3}, "n", "one choice", llm.Unsupported},
		{"logprobs", llm.Request{Model: "m", Messages: hi.Messages, Logprobs: true}, "logprobs", "logprobs", llm.Unsupported},
		{"json_schema", llm.Request{Model: "m", Messages: hi.Messages,
			ResponseFormat: json.RawMessage(`{"type":"json_schema","json_schema":{"name":"x","schema":{}}}`)}, "response_format", "json_schema", llm.Unsupported},
		{"invalid tool arguments", llm.Request{Model: "m", Messages: []llm.Message{text(llm.RoleUser, "a"),
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "f", Arguments: `{"a": "cut`}}}}}, "messages", "messages[1].tool_calls[0].function.arguments: not valid JSON", llm.Invalid},
		{"tool arguments not an object", llm.Request{Model: "m", Messages: []llm.Message{text(llm.RoleUser, "a"),
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "f", Arguments: `[1]`}}}}}, "messages", "not a JSON object", llm.Invalid},
		{"data URL not base64", llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser,
			Parts: []llm.Part{{Type: llm.PartImage, URL: "data:image/png,%89PNG"}}}}}, "messages", "base64", llm.Invalid},
		{"only a system prompt", llm.Request{Model: "m", Messages: []llm.Message{text(llm.RoleSystem, "s")}}, "messages", "at least one", llm.Invalid},
		{"unknown tool_choice", withTools(hi, `{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[]}}`), "tool_choice", "no Anthropic equivalent", llm.Unsupported},
		{"unknown role", llm.Request{Model: "m", Messages: []llm.Message{text("function", "x")}}, "messages", "role", llm.Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := encodeRequest(&tt.req, 4096)
			le := wantKind(t, err, tt.kind)
			if le.Status != 400 || le.Param != tt.param || le.Type != "invalid_request_error" || !strings.Contains(le.Message, tt.msg) {
				t.Errorf("got status %d param %q type %q message %q, want 400, %q, invalid_request_error, containing %q",
					le.Status, le.Param, le.Type, le.Message, tt.param, tt.msg)
			}
		})
	}
}

func TestModelMaxTokens(t *testing.T) {
	for model, want := range map[string]int{
		"claude-sonnet-4-5": 8192, "claude-opus-4-1-20250805": 8192, "claude-sonnet-4-20250514": 8192,
		"claude-haiku-4-5": 8192, "claude-3-7-sonnet-20250219": 4096, "claude-3-5-haiku-20241022": 4096,
		"claude-3-haiku-20240307": 4096, "my-finetune": 4096, "claude-5": 8192,
	} {
		if got := ModelMaxTokens(model); got != want {
			t.Errorf("%s: got %d, want %d", model, got, want)
		}
	}
}
