package uistream

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

func text(s string) []llm.Part { return []llm.Part{{Type: llm.PartText, Text: s}} }

func TestMessages(t *testing.T) {
	in := `[
	 {"id":"s","role":"system","parts":[{"type":"text","text":"Be brief."}]},
	 {"id":"u1","role":"user","parts":[{"type":"text","text":"Weather?"},
	   {"type":"file","mediaType":"image/png","url":"data:image/png;base64,iVBO"},
	   {"type":"file","mediaType":"text/plain","filename":"a.txt","url":"data:text/plain;base64,aGk="}]},
	 {"id":"a1","role":"assistant","parts":[{"type":"step-start"},
	   {"type":"text","text":"Let me ","providerMetadata":{"sluice":{"restarted":true}}},
	   {"type":"reasoning","text":"hmm"},{"type":"text","text":"Checking."},
	   {"type":"tool-get_weather","toolCallId":"c1","state":"output-available","input":{"city":"Paris"},"output":{"temp":18}},
	   {"type":"dynamic-tool","toolName":"lookup","toolCallId":"c2","state":"output-error","input":{},"errorText":"down"},
	   {"type":"tool-get_time","toolCallId":"c3","state":"input-available","input":{}},
	   {"type":"step-start"},{"type":"text","text":"It is 18."},{"type":"data-x","data":1}]},
	 {"id":"u2","role":"user","parts":[{"type":"text","text":"Thanks"}]}
	]`
	h, err := Messages(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Message{
		{Role: llm.RoleSystem, Parts: text("Be brief.")},
		{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "Weather?"},
			{Type: llm.PartImage, URL: "data:image/png;base64,iVBO"}, {Type: llm.PartText, Text: "a.txt:\nhi"}}},
		{Role: llm.RoleAssistant, Parts: text("Checking."), ToolCalls: []llm.ToolCall{
			{ID: "c1", Name: "get_weather", Arguments: `{"city":"Paris"}`}, {ID: "c2", Name: "lookup", Arguments: `{}`}}},
		{Role: llm.RoleTool, ToolCallID: "c1", Parts: text(`{"temp":18}`)},
		{Role: llm.RoleTool, ToolCallID: "c2", Parts: text("Error: down")},
		{Role: llm.RoleAssistant, Parts: text("It is 18.")},
		{Role: llm.RoleUser, Parts: text("Thanks")},
	}
	if !reflect.DeepEqual(h.Messages, want) {
		t.Errorf("got %+v\nwant %+v", h.Messages, want)
	}
	if h.LastAssistant != "" {
		t.Errorf("got last assistant %q, want none", h.LastAssistant)
	}
}

func TestMessagesContinuation(t *testing.T) {
	h, err := Messages(json.RawMessage(`[{"id":"u","role":"user","parts":[{"type":"text","text":"hi"}]},
	  {"id":"a","role":"assistant","parts":[{"type":"step-start"},{"type":"tool-t","toolCallId":"c","state":"output-available","input":{},"output":"ok"}]}]`))
	if err != nil || h.LastAssistant != "a" || len(h.Messages) != 3 {
		t.Fatalf("got %+v, %v; want 3 messages continuing a", h, err)
	}
}

func TestMessagesInvalid(t *testing.T) {
	for _, tt := range []struct{ name, in, param string }{
		{"not an array", `{}`, "messages"},
		{"role", `[{"id":"x","role":"tool","parts":[]}]`, "messages[0].role"},
		{"empty", `[{"id":"x","role":"user","parts":[]}]`, "messages"},
		{"pdf", `[{"id":"x","role":"user","parts":[{"type":"file","mediaType":"application/pdf","url":"https://x/y.pdf"}]}]`, "messages[0].parts[0].mediaType"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Messages(json.RawMessage(tt.in))
			var le *llm.Error
			if err == nil || !asErr(err, &le) || le.Param != tt.param || le.Kind != llm.Invalid {
				t.Errorf("got %v, want a 400 on %s", err, tt.param)
			}
		})
	}
}

func asErr(err error, le **llm.Error) bool { return errors.As(err, le) }

func TestWritesOn(t *testing.T) {
	user := `{"id":"u1","role":"user","parts":[{"type":"text","text":"hi"}]}`
	asst := `{"id":"a1","role":"assistant","parts":[{"type":"text","text":"yo"}]}`
	for _, tc := range []struct{ body, want string }{
		{`{"model":"m","id":"c","messages":[` + user + `]}`, ""},
		{`{"model":"m","id":"c","messages":[` + user + `,` + asst + `]}`, "a1"}, // a continuation
		{`{"model":"m","id":"c","trigger":"regenerate-message","messageId":"a0","messages":[` + user + `]}`, "a0"},
		{`{"model":"m","id":"c","trigger":"submit-message","messageId":"a0","messages":[` + user + `]}`, ""},
	} {
		r, err := Decode([]byte(tc.body))
		if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		if got := r.WritesOn(); got != tc.want {
			t.Errorf("%s: WritesOn = %q, want %q", tc.body, got, tc.want)
		}
	}
}
