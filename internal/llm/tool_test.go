package llm

import (
	"strings"
	"testing"
)

// Flat names are Codex's own; a custom tool's input survives the trip through a function's
// arguments byte for byte, HTML characters and all.
func TestToolNames(t *testing.T) {
	for _, tt := range [][3]string{{"mcp__docs", "search", "mcp__docs__search"}, {"ns_", "_f", "ns__f"}, {"", "f", "f"}} {
		if got := FlatName(tt[0], tt[1]); got != tt[2] {
			t.Errorf("FlatName(%q, %q) = %q, want %q", tt[0], tt[1], got, tt[2])
		}
	}
	in := "*** Begin Patch\n+<a href=\"x\">&</a>\n*** End Patch\n"
	args := CustomArgs(in)
	if args != `{"input":"*** Begin Patch\n+<a href=\"x\">&</a>\n*** End Patch\n"}` || CustomInput(args) != in {
		t.Errorf("got %s and back %q", args, CustomInput(args))
	}
	if CustomInput(`not json`) != "not json" {
		t.Error("want arguments a model wrote otherwise kept as they are")
	}
}

// Mask masks the client's own body as the target of its wire gets it: an Anthropic body
// whole, a Responses body's input and instructions only; every other member as it came.
func TestNativeMask(t *testing.T) {
	mask := func(s string) string { return strings.ReplaceAll(s, "sk-secret", "[REDACTED]") }
	a := &Native{Wire: "anthropic", Body: []byte(`{"system":"sk-secret","messages":[{"content":"sk-secret"}]}`)}
	a.Mask(mask)
	if strings.Contains(string(a.Body), "sk-secret") {
		t.Errorf("anthropic body: got %s", a.Body)
	}
	r := &Native{Wire: "responses", Fields: []Field{{Name: "input", Value: []byte(`"sk-secret"`)},
		{Name: "instructions", Value: []byte(`"sk-secret"`)}, {Name: "prompt_cache_key", Value: []byte(`"sk-secret"`)}}}
	r.Mask(mask)
	if string(r.Fields[0].Value) != `"[REDACTED]"` || string(r.Fields[1].Value) != `"[REDACTED]"` || string(r.Fields[2].Value) != `"sk-secret"` {
		t.Errorf("responses fields: got %+v", r.Fields)
	}
	(*Native)(nil).Mask(mask) // a request with no native body
}

// NativeOnly refuses, on another wire's adapter, what only the native wire carries.
func TestNativeOnly(t *testing.T) {
	r := &Request{Native: &Native{Wire: "anthropic", Only: []string{"web_search_20250305"}}}
	if e := r.NativeOnly("responses"); e == nil || e.Kind != Unsupported || !strings.Contains(e.Message, "web_search_20250305") {
		t.Errorf("got %v, want Unsupported naming the tool", e)
	}
	if e := r.NativeOnly("anthropic"); e != nil {
		t.Errorf("its own wire: got %v", e)
	}
	if e := (&Request{Native: &Native{Wire: "responses"}}).NativeOnly("openai"); e != nil {
		t.Errorf("nothing only-native: got %v", e)
	}
}

// Mask masks the prompt's text, its tool calls' arguments (as JSON) and the native body.
func TestRequestMask(t *testing.T) {
	text := func(s string) string { return strings.ReplaceAll(s, "sk-secret", "[REDACTED]") }
	r := &Request{Messages: []Message{{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "key sk-secret"}}},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c", Name: "f", Arguments: `{"k":"sk-secret"}`}}}},
		Native: &Native{Wire: "anthropic", Body: []byte(`{"system":"sk-secret"}`)}}
	r.Mask(text, text)
	if r.Messages[0].Parts[0].Text != "key [REDACTED]" || r.Messages[1].ToolCalls[0].Arguments != `{"k":"[REDACTED]"}` ||
		string(r.Native.Body) != `{"system":"[REDACTED]"}` {
		t.Errorf("got %+v, native %s", r.Messages, r.Native.Body)
	}
}

func TestUsagePlus(t *testing.T) {
	a := Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3, CachedTokens: 4, CacheWriteTokens: 5, CacheWrite1hTokens: 2, ReasoningTokens: 6, CacheDropped: 1, Units: 2}
	if got := a.Plus(Usage{PromptTokens: 10, CompletionTokens: 20, TotalTokens: 30, CachedTokens: 40, CacheWriteTokens: 50, CacheWrite1hTokens: 20, ReasoningTokens: 60, CacheDropped: 3, Estimated: true, Units: 5}); got != (Usage{11, 22, 33, 44, 55, 22, 66, 4, true, 7}) {
		t.Errorf("got %+v", got)
	}
}

// DropHosted leaves the other tools in order, and tool_choice only while a tool is left.
func TestDropHosted(t *testing.T) {
	r := &Request{Tools: []Tool{{Name: "exec"}, {Kind: ToolHosted, Name: "web_search"}, {Kind: ToolCustom, Name: "patch"},
		{Kind: ToolHosted, Name: "file_search"}}, ToolChoice: []byte(`"auto"`)}
	if got := strings.Join(r.Hosted(), ","); got != "web_search,file_search" {
		t.Errorf("got hosted %s, want web_search,file_search", got)
	}
	r.DropHosted()
	if len(r.Tools) != 2 || r.Tools[0].Name != "exec" || r.Tools[1].Name != "patch" || string(r.ToolChoice) != `"auto"` || r.Hosted() != nil {
		t.Errorf("got tools %+v choice %s, want exec and patch, auto", r.Tools, r.ToolChoice)
	}
	only := &Request{Tools: []Tool{{Kind: ToolHosted, Name: "web_search"}}, ToolChoice: []byte(`"required"`)}
	only.DropHosted()
	if len(only.Tools) != 0 || only.ToolChoice != nil {
		t.Errorf("got tools %+v choice %s, want none", only.Tools, only.ToolChoice)
	}
}
