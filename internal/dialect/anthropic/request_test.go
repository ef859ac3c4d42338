package anthropic

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

func noHeader(string) string { return "" }

// TestDecode: every block kind becomes what the other adapters read, and the body stays
// whole for Anthropic targets with the client's anthropic headers.
func TestDecode(t *testing.T) {
	body := `{"model":"claude-sonnet-4-5","max_tokens":2048,"system":"Be brief.",` +
		`"messages":[{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}},{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"c2ln"},{"type":"redacted_thinking","data":"b3Bx"},{"type":"text","text":"ok"},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command": "ls"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"a.txt"}],"is_error":true},{"type":"text","text":"next"}]}],` +
		`"tools":[{"name":"Bash","description":"run","input_schema":{"type":"object"}},{"type":"bash_20250124","name":"bash"}],` +
		`"tool_choice":{"type":"tool","name":"Bash","disable_parallel_tool_use":true},"thinking":{"type":"enabled","budget_tokens":1024},` +
		`"stop_sequences":["END"],"temperature":0.5,"top_k":5,"metadata":{"user_id":"u1"},"service_tier":"auto","stream":true}`
	r, err := Decode([]byte(body), func(h string) string {
		return map[string]string{"Anthropic-Beta": "interleaved-thinking-2025-05-14"}[h]
	})
	if err != nil {
		t.Fatal(err)
	}
	q := &r.Req
	want := []llm.Message{
		{Role: llm.RoleSystem, Plain: true, Parts: []llm.Part{{Type: llm.PartText, Text: "Be brief."}}},
		{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "look"}, {Type: llm.PartImage, URL: "data:image/png;base64,iVBO"}, {Type: llm.PartImage, URL: "https://x/y.png"}}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartText, Text: "ok"}}, ToolCalls: []llm.ToolCall{{ID: "toolu_1", Name: "Bash", Arguments: `{"command":"ls"}`}},
			Reasoning: []llm.Reasoning{{Text: "hm", Encrypted: "c2ln", Wire: "anthropic"}, {Encrypted: "b3Bx", Redacted: true, Wire: "anthropic"}}},
		{Role: llm.RoleTool, ToolCallID: "toolu_1", Parts: []llm.Part{{Type: llm.PartText, Text: "a.txt"}}},
		{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "next"}}},
	}
	if !reflect.DeepEqual(q.Messages, want) {
		t.Errorf("messages:\ngot  %+v\nwant %+v", q.Messages, want)
	}
	if r.Model != "claude-sonnet-4-5" || *q.MaxTokens != 2048 || !q.Stream || q.User != "u1" || q.Session != "u1" || *q.Temperature != 0.5 || !reflect.DeepEqual(q.Stop, []string{"END"}) {
		t.Errorf("options: got %+v", q)
	}
	if len(q.Tools) != 1 || q.Tools[0].Name != "Bash" || string(q.ToolChoice) != `{"function":{"name":"Bash"},"type":"function"}` ||
		len(q.Extra) != 1 || q.Extra[0].Name != "parallel_tool_calls" {
		t.Errorf("tools: got %+v %s %+v", q.Tools, q.ToolChoice, q.Extra)
	}
	n := q.Native
	if n == nil || string(n.Body) != body || n.Header["Anthropic-Beta"] != "interleaved-thinking-2025-05-14" || !reflect.DeepEqual(n.Only, []string{"server tool bash_20250124"}) {
		t.Errorf("native: got %+v", n)
	}
	if e := q.NativeOnly("openai"); e == nil || e.Kind != llm.Unsupported || !strings.Contains(e.Message, "bash_20250124") {
		t.Errorf("NativeOnly: got %v", e)
	}
	if e := q.NativeOnly("anthropic"); e != nil {
		t.Errorf("NativeOnly(anthropic): got %v, want nil", e)
	}
}

// Claude Code 2.1.328 (with the MCP gateway in use) puts system messages inside messages,
// which the Anthropic API takes (issue 35): each is a system message in its place, a string
// one plain, and the body stays whole for Anthropic targets.
func TestDecodeSystemMessages(t *testing.T) {
	body := `{"model":"claude-opus-5-5","max_tokens":32000,"system":[{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral"}}],` +
		`"messages":[{"role":"user","content":[{"type":"text","text":"List the files."}]},` +
		`{"role":"system","content":"MCP server everything is connected; its tools are mcp__everything__*."},` +
		`{"role":"user","content":"Go on."},` +
		`{"role":"system","content":[{"type":"text","text":"Reminder one."},{"type":"text","text":"Reminder two.","cache_control":{"type":"ephemeral"}}]},` +
		`{"role":"system","content":[]}],"stream":true}`
	r, err := Decode([]byte(body), noHeader)
	if err != nil {
		t.Fatal(err)
	}
	text := func(s ...string) []llm.Part {
		var ps []llm.Part
		for _, t := range s {
			ps = append(ps, llm.Part{Type: llm.PartText, Text: t})
		}
		return ps
	}
	marked := func(ps []llm.Part) []llm.Part {
		ps[len(ps)-1].Cache = &llm.Cache{}
		return ps
	}
	want := []llm.Message{
		{Role: llm.RoleSystem, Parts: marked(text("You are Claude Code."))},
		{Role: llm.RoleUser, Parts: text("List the files.")},
		{Role: llm.RoleSystem, Plain: true, Parts: text("MCP server everything is connected; its tools are mcp__everything__*.")},
		{Role: llm.RoleUser, Plain: true, Parts: text("Go on.")},
		{Role: llm.RoleSystem, Parts: marked(text("Reminder one.", "Reminder two."))},
	}
	if !reflect.DeepEqual(r.Req.Messages, want) {
		t.Errorf("messages:\ngot  %+v\nwant %+v", r.Req.Messages, want)
	}
	if n := r.Req.Native; n == nil || string(n.Body) != body || len(n.Only) != 0 {
		t.Errorf("native: got %+v, want the body whole, nothing Anthropic-only", n)
	}
}

func TestDecodeErrors(t *testing.T) {
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	tests := []struct{ body, param, msg string }{
		{`{"max_tokens":1,` + msgs + `}`, "model", "model: Field required"},
		{`{"model":"m",` + msgs + `}`, "max_tokens", "max_tokens: Field required"},
		{`{"model":"m","max_tokens":0,` + msgs + `}`, "max_tokens", "at least 1"},
		{`{"model":"m","max_tokens":1}`, "messages", "messages: Field required"},
		{`{"model":"m","max_tokens":1,"messages":[]}`, "messages", "at least one"},
		{`{"model":"m","max_tokens":1,"messages":[{"role":"user"}]}`, "messages.0.content", "Field required"},
		{`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_use","id":"a","name":"b"}]}]}`, "messages.0.content.0", "assistant"},
		{`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64"}}]}]}`, "messages.0.content.0", "source"},
		{`{"model":"m","max_tokens":1,"temperature":2,` + msgs + `}`, "temperature", "between 0 and 1"},
		{`{"model":"m","max_tokens":1,"tools":[{"name":"f"}],` + msgs + `}`, "tools", "input_schema"},
		{`{"model":"m","max_tokens":1,"tool_choice":{"type":"tool"},` + msgs + `}`, "tool_choice", "name"},
		{`{"model":"m","max_tokens":1,"thinking":{"type":"on"},` + msgs + `}`, "thinking", "thinking.type"},
		{`{"model":"m","max_tokens":1,"system":[{"type":"image"}],` + msgs + `}`, "system", "system.0.type"},
		{`{"model":"m","max_tokens":1,"messages":[{"role":"system","content":[{"type":"image","source":{"type":"url","url":"u"}}]}]}`, "messages.0.content", "messages.0.content.0.type: Input should be 'text'"},
		{`{"model":"m","max_tokens":1,"messages":[{"role":"tool","content":"x"}]}`, "messages.0.role", "Input should be 'user' or 'assistant'"},
	}
	for _, tt := range tests {
		_, err := Decode([]byte(tt.body), noHeader)
		var e *llm.Error
		if !errors.As(err, &e) || e.Kind != llm.Invalid || e.Param != tt.param || !strings.Contains(e.Message, tt.msg) {
			t.Errorf("%s: got %v, want an Invalid error on %q saying %q", tt.body, err, tt.param, tt.msg)
		}
	}
	if r, err := DecodeCount([]byte(`{"model":"m",`+msgs+`}`), noHeader); err != nil || r.Model != "m" {
		t.Errorf("count_tokens without max_tokens: got %v", err)
	}
}

// Any body decodes, or fails with a 400 invalid_request_error: never a panic, never another
// kind; a decoded one keeps the body for Anthropic targets and has a max_tokens.
func FuzzDecodeMessages(f *testing.F) {
	f.Add(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
	f.Add(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"},{"role":"system","content":[{"type":"text","text":"env"}]}]}`)
	f.Add(`{"model":"m","max_tokens":5,"system":[{"type":"text","text":"s"}],"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"i","name":"n","input":{}}]}]}`)
	f.Add(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"i","content":[{"type":"image","source":{"type":"url","url":"u"}}]}]}],"tools":[{"type":"web_search_20250305","name":"w"}]}`)
	f.Add(`{"model":"m","max_tokens":2000,"thinking":{"type":"enabled","budget_tokens":1024},"tool_choice":{"type":"any"},"messages":[{"role":"user","content":[{"type":"document","source":{"type":"text","data":"d"}}]}]}`)
	f.Add(`{"model":"m","max_tokens":5,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral","ttl":"1h"}}],"tools":[{"name":"f","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}],"messages":[{"role":"assistant","content":[{"type":"redacted_thinking","data":"d"},{"type":"tool_use","id":"i","name":"f","input":{},"cache_control":{"type":"ephemeral","ttl":"5m"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"i","content":[{"type":"text","text":"r","cache_control":{"type":"ephemeral"}}],"cache_control":{"type":"ephemeral","ttl":"2h"}}]}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		r, err := Decode([]byte(body), noHeader)
		if err != nil {
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != llm.Invalid {
				t.Fatalf("%q: got %v, want an Invalid *llm.Error", body, err)
			}
			return
		}
		if r.Req.Native == nil || string(r.Req.Native.Body) != body || r.Req.MaxTokens == nil || r.Model == "" {
			t.Fatalf("%q: got %+v", body, r.Req)
		}
		for _, m := range r.Req.Messages {
			for _, c := range m.ToolCalls {
				if !json.Valid([]byte(c.Arguments)) {
					t.Fatalf("%q: arguments %q are not JSON", body, c.Arguments)
				}
			}
		}
	})
}

// The request of the pinned Claude Code (2.1.328, `claude -p` as test/e2e runs it, recorded
// at the mock, so its members in the mock's order) decodes: its environment comes as a system
// message after the first user turn, the 400 of issue 35. The next CLI version's change of
// shape shows up here.
func TestDecodeClaudeCode(t *testing.T) {
	body, err := os.ReadFile("testdata/claude-code-2.1.328.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Decode(body, noHeader)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range r.Req.Messages {
		roles = append(roles, string(m.Role))
	}
	if got := strings.Join(roles, ","); got != "system,user,system" {
		t.Errorf("got roles %s, want system,user,system", got)
	}
	if env := r.Req.Messages[2]; !strings.Contains(env.Parts[0].Text, "# Environment") {
		t.Errorf("got %+v, want the environment as a system message", env)
	}
	if r.Model != "claude-opus-5-5" || len(r.Req.Tools) == 0 || string(r.Req.Native.Body) != string(body) {
		t.Errorf("got model %s, %d tools, want claude-opus-5-5, its tools and the body whole", r.Model, len(r.Req.Tools))
	}
	// Its three breakpoints (issue 46): two system blocks and the environment's message.
	q := &r.Req
	if n := len(q.CacheMarks()); n != 3 || q.Messages[0].Parts[1].Cache == nil || q.Messages[0].Parts[2].Cache == nil || q.Messages[2].Parts[0].Cache == nil {
		t.Errorf("got %d breakpoints, want those on system blocks 1 and 2 and on the environment message", n)
	}
	if !strings.Contains(q.Session, "session_id") {
		t.Errorf("got session %q, want Claude Code's metadata.user_id", q.Session)
	}
}
