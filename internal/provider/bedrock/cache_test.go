package bedrock

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// shape renders where a Converse body's cachePoints are: each system block, tool and
// content block by its kind ("text", "spec", "toolUse", ...), a cachePoint as "cp" (with
// ":ttl" when it has one), e.g. "system[text cp] tools[spec cp:1h] user[text cp]".
func shape(t *testing.T, body []byte) string {
	t.Helper()
	var w struct {
		System     []map[string]json.RawMessage `json:"system"`
		ToolConfig *struct {
			Tools []map[string]json.RawMessage `json:"tools"`
		} `json:"toolConfig"`
		Messages []struct {
			Role    string                       `json:"role"`
			Content []map[string]json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	blocks := func(bs []map[string]json.RawMessage) string {
		var out []string
		for _, b := range bs {
			if len(b) != 1 {
				t.Fatalf("a union block with %d members: %v", len(b), b)
			}
			for k, v := range b {
				switch k {
				case "cachePoint":
					var cp struct{ Type, TTL string }
					json.Unmarshal(v, &cp)
					if cp.Type != "default" {
						t.Fatalf("cachePoint type %q", cp.Type)
					}
					if k = "cp"; cp.TTL != "" {
						k += ":" + cp.TTL
					}
				case "toolSpec":
					k = "spec"
				}
				out = append(out, k)
			}
		}
		return "[" + strings.Join(out, " ") + "]"
	}
	var s []string
	if len(w.System) > 0 {
		s = append(s, "system"+blocks(w.System))
	}
	if w.ToolConfig != nil {
		s = append(s, "tools"+blocks(w.ToolConfig.Tools))
	}
	for _, m := range w.Messages {
		s = append(s, m.Role+blocks(m.Content))
	}
	return strings.Join(s, " ")
}

// marked builds the requests of TestCachePoints: c(ttl) is a breakpoint.
func c(ttl string) *llm.Cache { return &llm.Cache{TTL: ttl} }

func tool(name string, mark *llm.Cache) llm.Tool {
	return llm.Tool{Name: name, Parameters: json.RawMessage(`{"type":"object"}`), Cache: mark}
}

func part(s string, mark *llm.Cache) llm.Part {
	return llm.Part{Type: llm.PartText, Text: s, Cache: mark}
}

// turns is a conversation: system, a user turn, a call and its result.
func turns(sys, usr, call, result *llm.Cache) []llm.Message {
	return []llm.Message{
		{Role: llm.RoleSystem, Parts: []llm.Part{part("You are terse.", sys)}},
		{Role: llm.RoleUser, Parts: []llm.Part{part("List the files.", usr)}},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "tu_1", Name: "ls", Arguments: `{}`, Cache: call}}},
		{Role: llm.RoleTool, ToolCallID: "tu_1", Parts: []llm.Part{{Type: llm.PartText, Text: "a.go"}}, Cache: result},
	}
}

// TestCachePoints sends requests with breakpoints through a signed call to the test
// upstream and checks where the cachePoints are in the body it got, and the breakpoints
// the usage says were left out.
func TestCachePoints(t *testing.T) {
	const oldClaude = "anthropic.claude-3-7-sonnet-20250219-v1:0"
	tests := []struct {
		name    string
		model   string
		tools   []llm.Tool
		msgs    []llm.Message
		auto    bool // Config.CachePoints
		want    string
		dropped int
	}{
		{name: "system text", msgs: []llm.Message{{Role: llm.RoleSystem, Parts: []llm.Part{part("a", c("")), part("b", nil)}}, text(llm.RoleUser, "x")},
			want: "system[text cp text] user[text]"},
		{name: "tool spec", tools: []llm.Tool{tool("a", c("")), tool("b", nil)}, msgs: []llm.Message{text(llm.RoleUser, "x")},
			want: "tools[spec cp spec] user[text]"},
		{name: "text image and document parts", msgs: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
			part("see", c("")), {Type: llm.PartImage, URL: "data:image/png;base64,iVBORw0KGgo=", Cache: c("")},
			{Type: llm.PartFile, Data: "JVBERi0xLjQ=", MediaType: "application/pdf", Filename: "a.pdf", Cache: c("")}, part("end", nil)}}},
			want: "user[text cp image cp document cp text]"},
		{name: "assistant text and tool use", msgs: []llm.Message{text(llm.RoleUser, "x"), {Role: llm.RoleAssistant,
			Parts: []llm.Part{part("calling", c(""))}, ToolCalls: []llm.ToolCall{{ID: "1", Name: "f", Arguments: "{}", Cache: c("")}, {ID: "2", Name: "f"}}},
			{Role: llm.RoleTool, ToolCallID: "1", Parts: []llm.Part{part("r1", nil)}}, {Role: llm.RoleTool, ToolCallID: "2", Parts: []llm.Part{part("r2", nil)}}},
			want: "user[text] assistant[text cp toolUse cp toolUse] user[toolResult toolResult]"},
		{name: "tool result", msgs: turns(nil, nil, nil, c("")), want: "system[text] user[text] assistant[toolUse] user[toolResult cp]"},
		{name: "a tool result's part", msgs: func() []llm.Message {
			m := turns(nil, nil, nil, nil)
			m[3].Parts[0].Cache = c("")
			return m
		}(), want: "system[text] user[text] assistant[toolUse] user[toolResult cp]"},
		{name: "a tool result and its part make one point", msgs: func() []llm.Message {
			m := turns(nil, nil, nil, c("1h"))
			m[3].Parts[0].Cache = c("1h")
			return m
		}(), want: "system[text] user[text] assistant[toolUse] user[toolResult cp:1h]", dropped: 1},
		{name: "ttl", tools: []llm.Tool{tool("a", c("1h"))}, msgs: turns(c("1h"), nil, nil, c("5m")),
			want: "system[text cp:1h] tools[spec cp:1h] user[text] assistant[toolUse] user[toolResult cp:5m]"},
		{name: "a longer ttl after a shorter one goes as 5m", tools: []llm.Tool{tool("a", c("1h"))}, msgs: turns(c(""), nil, nil, c("1h")),
			want: "system[text cp] tools[spec cp:1h] user[text] assistant[toolUse] user[toolResult cp:5m]"},
		{name: "no ttl before claude 4.5", model: oldClaude, tools: []llm.Tool{tool("a", c("1h"))}, msgs: turns(c("1h"), nil, nil, c("5m")),
			want: "system[text cp] tools[spec cp] user[text] assistant[toolUse] user[toolResult cp]"},
		{name: "five marks keep the last four", tools: []llm.Tool{tool("a", c("")), tool("b", nil)}, msgs: turns(c(""), c(""), c(""), c("")),
			want: "system[text cp] tools[spec spec] user[text cp] assistant[toolUse cp] user[toolResult cp]", dropped: 1},
		{name: "six marks keep the last four", tools: []llm.Tool{tool("a", c("")), tool("b", c(""))}, msgs: turns(c(""), c(""), c(""), c("")),
			want: "system[text cp] tools[spec spec] user[text cp] assistant[toolUse cp] user[toolResult cp]", dropped: 2},
		{name: "nova caches no tools and takes no ttl", model: "us.amazon.nova-pro-v1:0", tools: []llm.Tool{tool("a", c("1h"))},
			msgs: turns(c("1h"), c(""), nil, c("")), want: "system[text cp] tools[spec] user[text cp] assistant[toolUse] user[toolResult cp]", dropped: 1},
		{name: "other models take none", model: "meta.llama3-3-70b-instruct-v1:0", tools: []llm.Tool{tool("a", c(""))}, msgs: turns(c(""), nil, nil, c("")),
			want: "system[text] tools[spec] user[text] assistant[toolUse] user[toolResult]", dropped: 3},
		{name: "a mark on an empty text", msgs: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{part("x", nil), part("", c(""))}}},
			want: "user[text]", dropped: 1},
		{name: "the operator's points without marks", auto: true, tools: []llm.Tool{tool("a", nil)}, msgs: turns(nil, nil, nil, nil),
			want: "system[text cp] tools[spec cp] user[text] assistant[toolUse] user[toolResult]"},
		{name: "the client's marks over the operator's", auto: true, tools: []llm.Tool{tool("a", nil)}, msgs: turns(nil, nil, nil, c("")),
			want: "system[text] tools[spec] user[text] assistant[toolUse] user[toolResult cp]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, frames(textAnswer(t)...))
			req := &llm.Request{Model: testModel, Tools: tt.tools, Messages: tt.msgs}
			if tt.model != "" {
				req.Model = tt.model
			}
			s, err := u.client(Config{CachePoints: tt.auto}).Stream(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			evs, end := providertest.Drain(t, s)
			body, _, _ := u.Last()
			if got := shape(t, body); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if r := providertest.Assemble(evs); end != io.EOF || r.Usage.CacheDropped != tt.dropped {
				t.Errorf("got %d dropped (end %v), want %d", r.Usage.CacheDropped, end, tt.dropped)
			}
		})
	}
}

// claudeCodeSig is a thinking signature as Claude writes it, held byte for byte.
const claudeCodeSig = "EqQBCkgIBxABGAIiQL+/3xZ9k0QWn/eq+dG2Fr4Ksh9M0Wb1g4tU3Ob7WlUuXvKX7v2T6sAa3/+Q==" // base64 with '+', '/', '='

// A Claude Code-shaped turn (issue 46): the system prompt marked, a tool marked with ttl 1h,
// the last tool_result marked, a thinking budget, a signed thinking block in the history.
// Bedrock gets 3 cachePoints (the one after the tool result too), the thinking config, and
// the signature as it came; the answer's reasoning and signature come back whole.
func TestClaudeCodeTurn(t *testing.T) {
	answer := frames(
		frame(t, "messageStart", `{"role":"assistant"}`),
		frame(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"The listing shows a.go."}}}`),
		frame(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"signature":"`+claudeCodeSig+`"}}}`),
		frame(t, "contentBlockStop", `{"contentBlockIndex":0}`),
		frame(t, "contentBlockDelta", `{"contentBlockIndex":1,"delta":{"text":"One file: a.go."}}`),
		frame(t, "contentBlockStop", `{"contentBlockIndex":1}`),
		frame(t, "messageStop", `{"stopReason":"end_turn"}`),
		frame(t, "metadata", `{"usage":{"inputTokens":20,"outputTokens":30,"totalTokens":4050,"cacheReadInputTokens":3000,"cacheWriteInputTokens":1000,`+
			`"cacheDetails":[{"ttl":"1h","inputTokens":700},{"ttl":"5m","inputTokens":300}]}}`),
	)
	u := newUpstream(t, answer)
	msgs := turns(c(""), nil, nil, c(""))
	msgs[2].Reasoning = []llm.Reasoning{{Text: "I should list the files.", Encrypted: claudeCodeSig, Wire: "anthropic"}}
	req := &llm.Request{Model: testModel, MaxTokens: intp(32000), ThinkingBudget: intp(4096),
		Tools: []llm.Tool{tool("ls", nil), tool("read", c("1h"))}, Messages: msgs,
		Metadata: json.RawMessage(`{"user_id":"user_abc_account_x_session_y"}`)}
	s, err := u.client(Config{}).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, end := providertest.Drain(t, s)
	body, _, _ := u.Last()
	// tools 1h, then the system's default: the ttl never grows along the prompt.
	if got, want := shape(t, body), "system[text cp] tools[spec spec cp:1h] user[text] assistant[reasoningContent toolUse] user[toolResult cp]"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var w struct {
		AdditionalModelRequestFields struct {
			Thinking map[string]any `json:"thinking"`
		} `json:"additionalModelRequestFields"`
		InferenceConfig struct {
			MaxTokens int `json:"maxTokens"`
		} `json:"inferenceConfig"`
	}
	json.Unmarshal(body, &w)
	if th := w.AdditionalModelRequestFields.Thinking; th["type"] != "enabled" || th["budget_tokens"] != 4096.0 || w.InferenceConfig.MaxTokens != 32000 {
		t.Errorf("got thinking %v, maxTokens %d, want enabled 4096 within 32000", th, w.InferenceConfig.MaxTokens)
	}
	if !bytes.Contains(body, []byte(`"signature":"`+claudeCodeSig+`"`)) {
		t.Errorf("the signature did not go byte for byte: %s", body)
	}
	r := providertest.Assemble(evs)
	ch := r.Choices[0]
	if end != io.EOF || ch.Reasoning != "The listing shows a.go." || len(ch.Opaque) != 1 || ch.Opaque[0].Encrypted != claudeCodeSig {
		t.Errorf("got reasoning %q, opaque %+v, end %v", ch.Reasoning, ch.Opaque, end)
	}
	want := llm.Usage{PromptTokens: 4020, CompletionTokens: 30, TotalTokens: 4050, CachedTokens: 3000, CacheWriteTokens: 1000, CacheWrite1hTokens: 700}
	if r.Usage != want {
		t.Errorf("got usage %+v, want %+v", r.Usage, want)
	}
}

// TestThinkingBudget: the client's budget (0 off, -1 the effort's) for Claude models only,
// merged with the other additionalModelRequestFields; a forced tool turns it off.
func TestThinkingBudget(t *testing.T) {
	effort := llm.Field{Name: "reasoning_effort", Value: json.RawMessage(`"low"`)}
	topK := llm.Field{Name: "top_k", Value: json.RawMessage(`5`)}
	tests := []struct {
		name   string
		model  string
		budget int
		extra  []llm.Field
		choice string
		want   string
	}{
		{name: "budget", budget: 2048, want: `{"thinking":{"budget_tokens":2048,"type":"enabled"}}`},
		{name: "over the effort", budget: 8000, extra: []llm.Field{effort}, want: `{"thinking":{"budget_tokens":8000,"type":"enabled"}}`},
		{name: "raised to the minimum", budget: 100, want: `{"thinking":{"budget_tokens":1024,"type":"enabled"}}`},
		{name: "zero is off", budget: 0, extra: []llm.Field{effort, topK}, want: `{"top_k":5}`},
		{name: "the model decides keeps the effort", budget: -1, extra: []llm.Field{effort}, want: `{"thinking":{"budget_tokens":1024,"type":"enabled"}}`},
		{name: "a forced tool turns it off", budget: 2048, choice: `"required"`, want: ``},
		{name: "not for other models", model: "amazon.nova-pro-v1:0", budget: 2048, want: ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := llm.Request{Model: testModel, ThinkingBudget: intp(tt.budget), Extra: tt.extra, Messages: []llm.Message{text(llm.RoleUser, "x")}}
			if tt.model != "" {
				req.Model = tt.model
			}
			if tt.choice != "" {
				req.Tools, req.ToolChoice = []llm.Tool{tool("f", nil)}, json.RawMessage(tt.choice)
			}
			b, _, err := encodeRequest(&req, false)
			if err != nil {
				t.Fatal(err)
			}
			var w struct {
				Extra json.RawMessage `json:"additionalModelRequestFields"`
			}
			json.Unmarshal(b, &w)
			if string(w.Extra) != tt.want {
				t.Errorf("got %s, want %s", w.Extra, tt.want)
			}
		})
	}
}

// TestReasoningBack: which reasoning blocks go back to Bedrock, and as what. A redacted
// block streamed by Bedrock comes back as the same bytes.
func TestReasoningBack(t *testing.T) {
	secret := []byte{0x00, 0xff, 'r', 'e', 'd', 0x10}
	u := newUpstream(t, frames(
		frame(t, "messageStart", `{"role":"assistant"}`),
		frame(t, "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"redactedContent":"`+base64.StdEncoding.EncodeToString(secret)+`"}}}`),
		frame(t, "contentBlockStop", `{"contentBlockIndex":0}`),
		frame(t, "messageStop", `{"stopReason":"end_turn"}`),
	))
	s, err := u.client(Config{}).Stream(context.Background(), testRequest())
	if err != nil {
		t.Fatal(err)
	}
	evs, _ := providertest.Drain(t, s)
	s.Close()
	streamed := providertest.Assemble(evs).Choices[0].Opaque
	if len(streamed) != 1 || streamed[0].Text != "" {
		t.Fatalf("got %+v, want one opaque block", streamed)
	}
	data := streamed[0].Encrypted
	redacted := `{"redactedContent":"` + data + `"}`
	tests := []struct {
		name string
		r    llm.Reasoning
		want string // the reasoningContent sent, "" for none
	}{
		{"streamed redacted, wire unknown", streamed[0], redacted},
		{"bedrock redacted", llm.Reasoning{Encrypted: data, Redacted: true, Wire: "bedrock"}, redacted},
		{"anthropic redacted_thinking", llm.Reasoning{Encrypted: data, Redacted: true, Wire: "anthropic"}, redacted},
		{"anthropic thinking", llm.Reasoning{Text: "t", Encrypted: claudeCodeSig, Wire: "anthropic"}, `{"reasoningText":{"text":"t","signature":"` + claudeCodeSig + `"}}`},
		{"a signed block without text", llm.Reasoning{Encrypted: claudeCodeSig, Wire: "bedrock"}, `{"reasoningText":{"text":"","signature":"` + claudeCodeSig + `"}}`},
		{"gemini signature", llm.Reasoning{Encrypted: "CiQBVKhc", Wire: "gemini"}, ""},
		{"responses encrypted content", llm.Reasoning{Text: "s", Encrypted: "gAAAAB", Wire: "responses"}, ""},
		{"unsigned", llm.Reasoning{Text: "t", Wire: "anthropic"}, ""},
		{"redacted data that is not base64", llm.Reasoning{Encrypted: "!!", Redacted: true, Wire: "anthropic"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sent := reasoningSent(t, tt.r)
			if got := string(sent); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if tt.want == redacted {
				var rc struct{ RedactedContent []byte }
				json.Unmarshal(sent, &rc)
				if !bytes.Equal(rc.RedactedContent, secret) {
					t.Errorf("got bytes %x, want %x", rc.RedactedContent, secret)
				}
			}
		})
	}
}

// reasoningSent is the reasoningContent Bedrock gets for r handed back before a text: its
// first block's, or nothing.
func reasoningSent(t *testing.T, r llm.Reasoning) json.RawMessage {
	t.Helper()
	req := llm.Request{Model: testModel, Messages: []llm.Message{text(llm.RoleUser, "q"),
		{Role: llm.RoleAssistant, Reasoning: []llm.Reasoning{r}, Parts: []llm.Part{part("a", nil)}}}}
	b, _, err := encodeRequest(&req, false)
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		Messages []struct {
			Content []struct {
				ReasoningContent json.RawMessage `json:"reasoningContent"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(b, &w); err != nil || len(w.Messages) != 2 {
		t.Fatalf("got %s", b)
	}
	return w.Messages[1].Content[0].ReasoningContent
}

// The plain (non-streamed) answer reports the 1h cache writes and the dropped breakpoints
// as the stream does.
func TestPlainCacheUsage(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"output":{"message":{"role":"assistant","content":[{"text":"ok"}]}},"stopReason":"end_turn",`+
			`"usage":{"inputTokens":5,"outputTokens":1,"totalTokens":506,"cacheWriteInputTokens":500,"cacheDetails":[{"ttl":"1h","inputTokens":500}]}}`)
	})
	req := &llm.Request{Model: "meta.llama3-3-70b-instruct-v1:0", Plain: true, Messages: turns(c(""), nil, nil, c(""))}
	s, err := u.client(Config{}).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, end := providertest.Drain(t, s)
	if r := providertest.Assemble(evs); end != io.EOF || r.Usage.CacheWrite1hTokens != 500 || r.Usage.CacheDropped != 2 {
		t.Errorf("got %+v, end %v", r.Usage, end)
	}
}

func TestLongTTL(t *testing.T) {
	for model, want := range map[string]bool{
		"us.anthropic.claude-sonnet-4-5-20250929-v1:0":                                        true,
		"anthropic.claude-haiku-4-5-20251001-v1:0":                                            true,
		"global.anthropic.claude-opus-4-6-v1":                                                 true,
		"arn:aws:bedrock:us-east-1:1:inference-profile/us.anthropic.claude-opus-4-5-20251101": true,
		"anthropic.claude-sonnet-5-20270101-v1:0":                                             true,
		"anthropic.claude-sonnet-4-20250514-v1:0":                                             false,
		"anthropic.claude-opus-4-1-20250805-v1:0":                                             false,
		"anthropic.claude-3-7-sonnet-20250219-v1:0":                                           false,
		"amazon.nova-pro-v1:0":                                                                false,
	} {
		if got := longTTL(model); got != want {
			t.Errorf("longTTL(%q) = %v, want %v", model, got, want)
		}
	}
}
