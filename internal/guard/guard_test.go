package guard

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

func must(t *testing.T, s Spec) *Guardrail {
	t.Helper()
	g, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func prompt(texts ...string) *llm.Request {
	req := &llm.Request{}
	for _, s := range texts {
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: s}}})
	}
	return req
}

func answer(text string) *llm.Response {
	return &llm.Response{Choices: []llm.Choice{{Text: text, Finish: "stop"}}}
}

func TestInput(t *testing.T) {
	tests := []struct {
		name   string
		spec   Spec
		req    *llm.Request
		reason string // "" for a pass
	}{
		{"term", Spec{Kind: "terms", Terms: []string{"Condor"}}, prompt("hi", "about project condor now"), "the prompt contains a blocked term"},
		{"term inside a word passes", Spec{Kind: "terms", Terms: []string{"condor"}}, prompt("condors fly"), ""},
		{"regex", Spec{Kind: "regex", Pattern: `TCK-[0-9]{6}`}, prompt("see TCK-123456"), "the prompt matches a blocked pattern"},
		{"regex in tool arguments", Spec{Kind: "regex", Pattern: `secret`},
			&llm.Request{Messages: []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{Name: "f", Arguments: `{"a":"secret"}`}}}}},
			"the prompt matches a blocked pattern"},
		{"pii", Spec{Kind: "pii"}, prompt("mail me at jane.doe@example.com"), "the prompt contains personal data (email)"},
		{"no pii", Spec{Kind: "pii"}, prompt("nothing personal here"), ""},
		{"secrets are not pii", Spec{Kind: "pii"}, prompt("key sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7"), ""},
		{"max tokens", Spec{Kind: "max_size", MaxTokens: 2}, prompt("twelve bytes"), "the prompt is about 3 tokens, over the limit of 2"},
		{"max bytes", Spec{Kind: "max_size", MaxBytes: 11}, prompt("twelve bytes"), "the prompt is 12 bytes, over the limit of 11"},
		{"within size", Spec{Kind: "max_size", MaxTokens: 3, MaxBytes: 12}, prompt("twelve bytes"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.Name, tt.spec.Stage = "g", Input
			r := CheckInput([]*Guardrail{must(t, tt.spec)}, tt.req)
			switch {
			case tt.reason == "" && r != nil:
				t.Errorf("got refusal %q, want a pass", r.Reason)
			case tt.reason != "" && (r == nil || r.Reason != tt.reason || r.Guardrail != "g" || r.Stage != Input):
				t.Errorf("got %+v, want refusal %q by g", r, tt.reason)
			}
		})
	}
}

func TestInputMask(t *testing.T) {
	g := must(t, Spec{Name: "pii-mask", Stage: Input, Kind: "pii", Action: "mask"})
	req := prompt("write to jane.doe@example.com or +1 415 555 0100 today")
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant,
		ToolCalls: []llm.ToolCall{{Name: "send", Arguments: `{"to":"jane.doe@example.com"}`}}})
	if r := CheckInput([]*Guardrail{g}, req); r != nil {
		t.Fatalf("got refusal %+v, want the prompt masked and sent", r)
	}
	if got, want := req.Messages[0].Parts[0].Text, "write to [REDACTED:email] or [REDACTED:phone] today"; got != want {
		t.Errorf("got text %q, want %q", got, want)
	}
	args := req.Messages[1].ToolCalls[0].Arguments
	if !json.Valid([]byte(args)) || strings.Contains(args, "jane") {
		t.Errorf("got arguments %s, want valid JSON with the email masked", args)
	}
	req = prompt("hi")
	req.Native = &llm.Native{Wire: "anthropic", Body: []byte(`{"messages":[{"role":"user","content":"write to jane.doe@example.com"}]}`)}
	CheckInput([]*Guardrail{g}, req)
	if got := string(req.Native.Body); !json.Valid(req.Native.Body) || strings.Contains(got, "jane") || !strings.Contains(got, "[REDACTED:email]") {
		t.Errorf("got native body %s, want valid JSON with the email masked", got)
	}
	re := must(t, Spec{Name: "tickets", Stage: Input, Kind: "regex", Pattern: `TCK-[0-9]{6}`, Action: "mask"})
	req = prompt("see TCK-123456 please")
	CheckInput([]*Guardrail{re}, req)
	if got := req.Messages[0].Parts[0].Text; got != "see [REDACTED:tickets] please" {
		t.Errorf("got %q, want the ticket masked", got)
	}
}

func TestOutput(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","required":["name","age"],"properties":{"name":{"type":"string"},"age":{"type":"integer"}},"additionalProperties":false}`)
	rfSchema := &llm.Request{ResponseFormat: json.RawMessage(`{"type":"json_schema","json_schema":{"name":"p","schema":` + string(schema) + `}}`)}
	rfObject := &llm.Request{ResponseFormat: json.RawMessage(`{"type":"json_object"}`)}
	rfText := &llm.Request{ResponseFormat: json.RawMessage(`{"type":"text"}`)}
	tests := []struct {
		name   string
		spec   Spec
		req    *llm.Request
		resp   *llm.Response
		reason string
	}{
		{"term", Spec{Kind: "terms", Terms: []string{"forbidden"}}, nil, answer("a Forbidden word"), "the answer contains a blocked term"},
		{"term in reasoning", Spec{Kind: "terms", Terms: []string{"forbidden"}}, nil,
			&llm.Response{Choices: []llm.Choice{{Reasoning: "forbidden thoughts", Text: "fine"}}}, "the answer contains a blocked term"},
		{"regex in a tool call", Spec{Kind: "regex", Pattern: `rm -rf`}, nil,
			&llm.Response{Choices: []llm.Choice{{ToolCalls: []llm.ToolCall{{Name: "sh", Arguments: `{"cmd":"rm -rf /"}`}}}}}, "the answer matches a blocked pattern"},
		{"size in bytes", Spec{Kind: "max_size", MaxBytes: 4}, nil, answer("12345"), "the answer is 5 bytes, over the limit of 4"},
		{"size in tokens", Spec{Kind: "max_size", MaxTokens: 4}, nil,
			&llm.Response{Choices: []llm.Choice{{Text: "x"}}, Usage: llm.Usage{CompletionTokens: 5}}, "the answer is 5 tokens, over the limit of 4"},
		{"schema of the request: valid", Spec{Kind: "json_schema"}, rfSchema, answer(`{"name":"Ada","age":36}`), ""},
		{"schema of the request: invalid JSON", Spec{Kind: "json_schema"}, rfSchema, answer(`{"name":"Ada",`), "the answer is not valid JSON"},
		{"schema of the request: wrong type", Spec{Kind: "json_schema"}, rfSchema, answer(`{"name":"Ada","age":"thirty-six"}`),
			"the answer does not match the JSON schema at #/properties/age/type"},
		{"schema of the request: missing member", Spec{Kind: "json_schema"}, rfSchema, answer(`{"name":"Ada"}`),
			"the answer does not match the JSON schema at #/required"},
		{"json_object", Spec{Kind: "json_schema"}, rfObject, answer(`[1,2]`), "the answer is not a JSON object"},
		{"json_object: not JSON", Spec{Kind: "json_schema"}, rfObject, answer(`Sure! {"a":1}`), "the answer is not valid JSON"},
		{"text asked: passes", Spec{Kind: "json_schema"}, rfText, answer(`not json`), ""},
		{"no response_format: passes", Spec{Kind: "json_schema"}, nil, answer(`not json`), ""},
		{"own schema, always", Spec{Kind: "json_schema", Schema: schema}, nil, answer(`{"name":1,"age":2}`),
			"the answer does not match the JSON schema at #/properties/name/type"},
		{"tool calls only: nothing to judge", Spec{Kind: "json_schema"}, rfObject,
			&llm.Response{Choices: []llm.Choice{{ToolCalls: []llm.ToolCall{{Name: "f", Arguments: "{}"}}}}}, ""},
		{"a $ref outside the schema is not followed", Spec{Kind: "json_schema"},
			&llm.Request{ResponseFormat: json.RawMessage(`{"type":"json_schema","json_schema":{"name":"p","schema":{"$ref":"file:///etc/passwd"}}}`)},
			answer(`{}`), ""}, // checked below: refused as unusable
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.Name, tt.spec.Stage = "out", Output
			r := CheckOutput([]*Guardrail{must(t, tt.spec)}, tt.req, tt.resp)
			if strings.HasPrefix(tt.name, "a $ref") {
				if r == nil || !strings.HasPrefix(r.Reason, "the request's response_format schema cannot be used") {
					t.Errorf("got %+v, want the schema refused as unusable", r)
				}
				return
			}
			switch {
			case tt.reason == "" && r != nil:
				t.Errorf("got refusal %q, want a pass", r.Reason)
			case tt.reason != "" && (r == nil || r.Reason != tt.reason || r.Stage != Output):
				t.Errorf("got %+v, want refusal %q", r, tt.reason)
			}
		})
	}
}

func TestNew(t *testing.T) {
	bad := []Spec{
		{Name: "a", Stage: Output, Kind: "pii", Action: "mask"},
		{Name: "b", Stage: Input, Kind: "json_schema"},
		{Name: "c", Stage: Input, Kind: "regex", Pattern: "("},
		{Name: "d", Stage: Output, Kind: "json_schema", Schema: json.RawMessage(`{"type":12}`)},
		{Name: "e", Stage: Input, Kind: "max_size"},
		{Name: "f", Stage: "middle", Kind: "terms"},
	}
	for _, s := range bad {
		if _, err := New(s); err == nil || !strings.Contains(err.Error(), "guardrail "+s.Name) {
			t.Errorf("New(%+v): got %v, want an error naming the guardrail", s, err)
		}
	}
	if g := must(t, Spec{Name: "h", Stage: Output, Kind: "terms", Terms: []string{"x"}}); !g.Hold {
		t.Errorf("an output guardrail without a mode: got Hold false, want hold (the default)")
	}
	if g := must(t, Spec{Name: "s", Stage: Output, Kind: "terms", Terms: []string{"x"}, Mode: "stream"}); g.Hold {
		t.Errorf("mode stream: got Hold true, want false")
	}
	g := must(t, Spec{Name: "r", Stage: Output, Kind: "terms", Terms: []string{"x"}, Action: "retry"})
	if r := CheckOutput([]*Guardrail{g}, nil, answer("an x")); r == nil || !r.Retry {
		t.Errorf("action retry: got %+v, want a refusal asking for a retry", r)
	}
}

func TestCatalogOf(t *testing.T) {
	a := must(t, Spec{Name: "a", Stage: Input, Kind: "terms", Terms: []string{"x"}})
	b := must(t, Spec{Name: "b", Stage: Input, Kind: "terms", Terms: []string{"y"}})
	k := must(t, Spec{Name: "k", Stage: Input, Kind: "terms", Terms: []string{"z"}})
	gc := &Catalog{ByName: map[string]*Guardrail{"a": a, "b": b, "k": k}, ByAlias: map[string][]*Guardrail{"chat": {a, b}}}
	names := func(s Set) string {
		var n []string
		for _, g := range s {
			n = append(n, g.Name)
		}
		return strings.Join(n, ",")
	}
	for _, tc := range []struct {
		alias string
		keyed []string
		want  string
	}{
		{"chat", nil, "a,b"},
		{"chat", []string{"k", "a", "gone", "k"}, "a,b,k"}, // the alias's first, each once, unknown names skipped
		{"other", []string{"k"}, "k"},
		{"other", nil, ""},
	} {
		if got := names(gc.Of(tc.alias, tc.keyed)); got != tc.want {
			t.Errorf("Of(%q, %v) = %q, want %q", tc.alias, tc.keyed, got, tc.want)
		}
	}
	if got := gc.ByAlias["chat"]; len(got) != 2 {
		t.Errorf("Of changed the alias's own list: %d guardrails", len(got)) // appended to a copy
	}
}
