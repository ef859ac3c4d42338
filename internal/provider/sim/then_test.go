package sim

import (
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// TestThen checks the mock's then= over each wire: a tool call while no tool has answered,
// then text once the conversation ends with a tool result (what a round loop needs).
func TestThen(t *testing.T) {
	user := llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "run it"}}, Plain: true}
	call := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "demo", Arguments: "{}"}}}
	result := llm.Message{Role: llm.RoleTool, ToolCallID: "call_1", Parts: []llm.Part{{Type: llm.PartText, Text: "42 rows"}}}
	for _, api := range APIs {
		t.Run(api, func(t *testing.T) {
			p, err := New("sim", api)
			if err != nil {
				t.Fatal(err)
			}
			first := &llm.Request{Model: "tools?name=demo&then=echo", Messages: []llm.Message{user}}
			if _, calls, finish, err := run(t, p, first); err != nil || calls != 1 || finish != "tool_calls" {
				t.Errorf("first round: %d calls, finish %q, err %v; want one call", calls, finish, err)
			}
			next := &llm.Request{Model: "tools?name=demo&then=echo", Messages: []llm.Message{user, call, result}}
			text, calls, finish, err := run(t, p, next)
			if err != nil || calls != 0 || finish != "stop" || text != "The tool answered: 42 rows" {
				t.Errorf("after the result: text %q, %d calls, finish %q, err %v; want the result echoed", text, calls, finish, err)
			}
			next.Model = "tools?name=demo&then=text&len=30"
			if text, calls, _, err := run(t, p, next); err != nil || calls != 0 || len(text) != 30 {
				t.Errorf("then=text: text %q, %d calls, err %v; want 30 bytes of text", text, calls, err)
			}
		})
	}
}
