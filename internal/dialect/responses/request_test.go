package responses

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

func TestDecodeResponsesErrors(t *testing.T) {
	const in = `"input":"hi"`
	tests := []struct {
		name, body, param, code, msg string
	}{
		{"malformed", `{"model":"x",`, "", "", "could not parse"},
		{"not an object", `["x"]`, "", "", "JSON object"},
		{"duplicate", `{"model":"x","model":"y",` + in + `}`, "model", "", "Duplicate"},
		{"missing model", `{` + in + `}`, "model", "", "Missing required parameter: 'model'"},
		{"model not a string", `{"model":1,` + in + `}`, "model", "", "expected a string"},
		{"missing input", `{"model":"x"}`, "input", "", "Missing required parameter: 'input'"},
		{"input a number", `{"model":"x","input":3}`, "input", "", "a string or an array of input items"},
		{"empty input", `{"model":"x","input":[]}`, "input", "", "empty array"},
		{"item not an object", `{"model":"x","input":[3]}`, "input[0]", "", "input item object"},
		{"no type, no role", `{"model":"x","input":[{"content":"hi"}]}`, "input[0].type", "", "Missing required parameter"},
		{"role tool", `{"model":"x","input":[{"role":"tool","content":"hi"}]}`, "input[0].role", "", "'tool'"},
		{"missing role", `{"model":"x","input":[{"type":"message","content":"hi"}]}`, "input[0].role", "", "Missing required parameter"},
		{"missing content", `{"model":"x","input":[{"role":"user"}]}`, "input[0].content", "", "Missing required parameter"},
		{"empty user content", `{"model":"x","input":[{"role":"user","content":[]}]}`, "input[0].content", "", "empty array"},
		{"content a number", `{"model":"x","input":[{"role":"user","content":5}]}`, "input[0].content", "", "content parts"},
		{"image in system", `{"model":"x","input":[{"role":"system","content":[{"type":"input_image","image_url":"https://a/b.png"}]}]}`, "input[0].content[0].type", "", "'input_image' in a system message"},
		{"output_text from user", `{"model":"x","input":[{"role":"user","content":[{"type":"output_text","text":"a"}]}]}`, "input[0].content[0].type", "", "'output_text' in a user message"},
		{"text part without text", `{"model":"x","input":[{"role":"user","content":[{"type":"input_text"}]}]}`, "input[0].content[0].text", "", "Missing"},
		{"function_call without call_id", `{"model":"x","input":[{"type":"function_call","name":"f","arguments":"{}"}]}`, "input[0]", "", "call_id"},
		{"function_call_output without call_id", `{"model":"x","input":[{"type":"function_call_output","output":"r"}]}`, "input[0].call_id", "", "call_id"},
		{"function_call_output without output", `{"model":"x","input":[{"type":"function_call_output","call_id":"c"}]}`, "input[0].output", "", "Missing"},
		{"namespace in a namespace", `{"model":"x",` + in + `,"tools":[{"type":"namespace","name":"a","tools":[{"type":"namespace","name":"b","tools":[]}]}]}`, "tools[0].tools[0].type", "", "cannot hold a namespace"},
		{"hosted tool in a namespace", `{"model":"x",` + in + `,"tools":[{"type":"namespace","name":"a","tools":[{"type":"web_search"}]}]}`, "tools[0].tools[0].type", "", "'web_search'"},
		{"empty namespace", `{"model":"x",` + in + `,"tools":[{"type":"namespace","name":"a","tools":[]}]}`, "tools[0].tools", "", "non-empty array"},
		{"tool without type", `{"model":"x",` + in + `,"tools":[{"name":"f"}]}`, "tools[0].type", "", "Missing"},
		{"custom_tool_call without input", `{"model":"x","input":[{"type":"custom_tool_call","call_id":"c","name":"apply_patch"}]}`, "input[0]", "", "input"},
		{"tool without name", `{"model":"x",` + in + `,"tools":[{"type":"function"}]}`, "tools[0].name", "", "Missing"},
		{"tool bad name", `{"model":"x",` + in + `,"tools":[{"type":"function","name":"a b"}]}`, "tools[0].name", "", "must match"},
		{"tools not an array", `{"model":"x",` + in + `,"tools":{}}`, "tools", "", "array of tool objects"},
		{"tool_choice value", `{"model":"x",` + in + `,"tool_choice":"sometimes"}`, "tool_choice", "", "'sometimes'"},
		{"tool_choice without name", `{"model":"x",` + in + `,"tool_choice":{"type":"function"}}`, "tool_choice.name", "", "Missing"},
		{"text format type", `{"model":"x",` + in + `,"text":{"format":{"type":"xml"}}}`, "text.format.type", "", "'xml'"},
		{"json_schema without name", `{"model":"x",` + in + `,"text":{"format":{"type":"json_schema","schema":{}}}}`, "text.format.name", "", "Missing"},
		{"json_schema without schema", `{"model":"x",` + in + `,"text":{"format":{"type":"json_schema","name":"n"}}}`, "text.format.schema", "", "Missing"},
		{"reasoning effort type", `{"model":"x",` + in + `,"reasoning":{"effort":1}}`, "reasoning.effort", "", "a string"},
		{"temperature range", `{"model":"x",` + in + `,"temperature":2.5}`, "temperature", "", "out of range"},
		{"top_p type", `{"model":"x",` + in + `,"top_p":"high"}`, "top_p", "", "a number"},
		{"max_output_tokens zero", `{"model":"x",` + in + `,"max_output_tokens":0}`, "max_output_tokens", "", "out of range"},
		{"metadata values", `{"model":"x",` + in + `,"metadata":{"a":1}}`, "metadata", "", "string values"},
		{"metadata too many", `{"model":"x",` + in + `,"metadata":{` + manyPairs(17) + `}}`, "metadata", "", "at most 16"},
		{"include type", `{"model":"x",` + in + `,"include":"reasoning.encrypted_content"}`, "include", "", "array of strings"},
		{"store type", `{"model":"x",` + in + `,"store":"no"}`, "store", "", "a boolean"},
		{"stream type", `{"model":"x",` + in + `,"stream":1}`, "stream", "", "a boolean"},
		{"truncation value", `{"model":"x",` + in + `,"truncation":"middle"}`, "truncation", "", "'auto' and 'disabled'"},
		{"background", `{"model":"x",` + in + `,"background":true}`, "background", "", "not supported"},
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
			if pe := llm.Public(err); pe.Type != "invalid_request_error" || pe.Code != tt.code {
				t.Errorf("got type %q code %q, want invalid_request_error and %q", pe.Type, pe.Code, tt.code)
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

func manyPairs(n int) string {
	var b []string
	for i := range n {
		b = append(b, `"k`+string(rune('a'+i))+`":"v"`)
	}
	return strings.Join(b, ",")
}

func TestDecodeResponsesFields(t *testing.T) {
	body := `{"model":"default","instructions":"Be brief.",
	"input":[
		{"role":"user","content":[{"type":"input_text","text":"What is this?"},{"type":"input_image","image_url":"data:image/png;base64,AAAA","detail":"low"}]},
		{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Look."},{"type":"summary_text","text":"Then call."}],"encrypted_content":"gAAA"},
		{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Checking.","annotations":[]}]},
		{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}","status":"completed"},
		{"type":"function_call","id":"fc_2","call_id":"call_2","name":"get_weather","arguments":"{\"city\":\"Rome\"}"},
		{"type":"function_call_output","call_id":"call_1","output":"18C"},
		{"type":"function_call_output","call_id":"call_2","output":[{"type":"input_text","text":"21C"}]},
		{"role":"developer","content":"Answer in French."},
		{"role":"assistant","content":"D'accord."},
		{"type":"message","role":"user","content":"Merci"}
	],
	"tools":[{"type":"function","name":"get_weather","description":"Weather","parameters":{"type":"object",
		"properties":{"city":{"type":"string"}}},"strict":true}],
	"tool_choice":{"type":"function","name":"get_weather"},
	"text":{"format":{"type":"json_schema","name":"w","schema":{"type":"object"},"strict":true},"verbosity":"low"},
	"reasoning":{"effort":"high","summary":"auto"},
	"max_output_tokens":100,"temperature":0.5,"top_p":1,"metadata":{"k":"v"},"stream":true,"store":false,
	"include":["reasoning.encrypted_content"],"previous_response_id":"resp_0","user":"u1","parallel_tool_calls":false,
	"truncation":"disabled","service_tier":"auto","top_logprobs":0,"stream_options":{"include_obfuscation":false}}`
	rr, err := Decode([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	text := func(s string) []llm.Part { return []llm.Part{{Type: llm.PartText, Text: s}} }
	hundred, half, one, f := 100, 0.5, 1.0, false
	strict := true
	want := llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Plain: true, Parts: text("Be brief.")},
			{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "What is this?"},
				{Type: llm.PartImage, URL: "data:image/png;base64,AAAA", Detail: "low"}}},
			{Role: llm.RoleAssistant, Parts: text("Checking."),
				Reasoning: []llm.Reasoning{{ID: "rs_1", Text: "Look.\n\nThen call.", Encrypted: "gAAA"}},
				ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
					{ID: "call_2", Name: "get_weather", Arguments: `{"city":"Rome"}`}}},
			{Role: llm.RoleTool, ToolCallID: "call_1", Plain: true, Parts: text("18C")},
			{Role: llm.RoleTool, ToolCallID: "call_2", Parts: text("21C")},
			{Role: llm.RoleDeveloper, Plain: true, Parts: text("Answer in French.")},
			{Role: llm.RoleAssistant, Plain: true, Parts: text("D'accord.")},
			{Role: llm.RoleUser, Plain: true, Parts: text("Merci")},
		},
		Tools: []llm.Tool{{Name: "get_weather", Description: "Weather", Strict: &strict,
			Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}},
		ToolChoice:          json.RawMessage(`{"type":"function","function":{"name":"get_weather"}}`),
		ResponseFormat:      json.RawMessage(`{"type":"json_schema","json_schema":{"name":"w","schema":{"type":"object"},"strict":true}}`),
		MaxCompletionTokens: &hundred, Temperature: &half, TopP: &one, Stream: true, Store: &f,
		User: "u1", Session: "u1", PreviousResponseID: "resp_0", Include: []string{"reasoning.encrypted_content"},
		Metadata: json.RawMessage(`{"k":"v"}`),
		Extra: []llm.Field{{Name: "verbosity", Value: json.RawMessage(`"low"`)},
			{Name: "reasoning_effort", Value: json.RawMessage(`"high"`)},
			{Name: "parallel_tool_calls", Value: json.RawMessage(`false`)},
			{Name: "service_tier", Value: json.RawMessage(`"auto"`)}},
	}
	if n := rr.Req.Native; n == nil || n.Wire != "responses" || len(n.Fields) != 21 || n.Fields[0].Name != "model" || n.Fields[20].Name != "stream_options" {
		t.Errorf("got native %+v, want the body's 21 members in order", rr.Req.Native)
	}
	rr.Req.Native = nil
	sameJSON(t, "request", rr.Req, want)
	if rr.Model != "default" || !rr.echo.Encrypted || string(rr.echo.ToolChoice) != `{"type":"function","name":"get_weather"}` ||
		string(rr.echo.Reasoning) != `{"effort":"high","summary":"auto"}` {
		t.Errorf("got model %q echo %+v, want the client's values echoed", rr.Model, rr.echo)
	}
	if strings.ContainsAny(string(rr.echo.Tools), "\n\t") {
		t.Errorf("got echoed tools %s, want them compacted", rr.echo.Tools)
	}
}

func TestDecodeResponsesShortForms(t *testing.T) {
	rr, err := Decode([]byte(`{"model":"m","input":"Hello","tool_choice":"required","text":{"format":{"type":"json_object"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Message{{Role: llm.RoleUser, Plain: true, Parts: []llm.Part{{Type: llm.PartText, Text: "Hello"}}}}
	sameJSON(t, "messages", rr.Req.Messages, want)
	if string(rr.Req.ToolChoice) != `"required"` || string(rr.Req.ResponseFormat) != `{"type":"json_object"}` {
		t.Errorf("got tool_choice %s response_format %s", rr.Req.ToolChoice, rr.Req.ResponseFormat)
	}
	// With previous_response_id the input may be absent: the upstream holds the conversation.
	if _, err := Decode([]byte(`{"model":"m","previous_response_id":"resp_1"}`)); err != nil {
		t.Errorf("got %v, want previous_response_id alone accepted", err)
	}
	// Reasoning that no output follows is dropped, not sent as an empty assistant turn.
	rr, err = Decode([]byte(`{"model":"m","input":[{"type":"reasoning","id":"rs_1","summary":[]},{"role":"user","content":"hi"}]}`))
	if err != nil || len(rr.Req.Messages) != 1 || rr.Req.Messages[0].Role != llm.RoleUser {
		t.Errorf("got %+v, %v, want the user message only", rr.Req.Messages, err)
	}
}

// sameJSON compares got and want deeply, and shows both as JSON when they differ.
func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("%s:\ngot:  %s\nwant: %s", what, g, w)
	}
}
