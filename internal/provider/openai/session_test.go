package openai

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// sent runs req through the adapter of api ("chat" or "responses") on an httptest upstream
// that answers with a recorded stream, and returns the body the upstream got. openAI is
// Config.OpenAI: kind openai or azure rather than openai-compatible.
func sent(t *testing.T, api string, openAI bool, req *llm.Request) string {
	t.Helper()
	answer := respCreated + respCompleted
	if api == "chat" {
		b, err := os.ReadFile("testdata/openai-chat-text.sse")
		if err != nil {
			t.Fatal(err)
		}
		answer = string(b)
	}
	u := newUpstream(t, providertest.SSE(answer))
	var p llm.Provider = u.client(Config{OpenAI: openAI})
	if api == "responses" {
		p = u.responses(Config{OpenAI: openAI})
	}
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	_, end := providertest.Drain(t, s)
	s.Close()
	wantEOF(t, end)
	body, _, _ := u.Last()
	if !json.Valid(body) {
		t.Fatalf("the upstream got invalid JSON: %s", body)
	}
	return string(body)
}

// member is the raw value of body's top-level member name, "" when absent; it fails the test
// when the member is there more than once (a duplicate key means whatever the server's
// parser makes of it).
func member(t *testing.T, body, name string) string {
	t.Helper()
	if n := strings.Count(body, `"`+name+`":`); n > 1 {
		t.Fatalf("%s is in the body %d times: %s", name, n, body)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	return string(m[name])
}

func budget(n int) *int { return &n }

func TestSessionKey(t *testing.T) {
	k := sessionKey("user-42")
	if k != sessionKey("user-42") || len(k) != len("sluice-")+32 || !strings.HasPrefix(k, "sluice-") {
		t.Fatalf("got %q, want sluice- and 32 hex characters, the same each time", k)
	}
	if k == sessionKey("user-43") || strings.Contains(k, "user-42") {
		t.Fatalf("got %q: another conversation's key, or the raw value", k)
	}
}

func TestPromptCacheKeyUpstream(t *testing.T) {
	derived := `"` + sessionKey("user-42") + `"`
	tests := []struct {
		name   string
		api    string
		openAI bool
		req    func(r *llm.Request)
		want   string // prompt_cache_key's raw value, "" absent
	}{
		{name: "chat openai derived", api: "chat", openAI: true, req: func(r *llm.Request) { r.Session = "user-42" }, want: derived},
		{name: "chat compatible none", api: "chat", req: func(r *llm.Request) { r.Session = "user-42" }},
		{name: "chat compatible client key", api: "chat", req: func(r *llm.Request) { r.PromptCacheKey, r.Session = "k1", "k1" }, want: `"k1"`},
		{name: "chat openai client key wins", api: "chat", openAI: true,
			req: func(r *llm.Request) { r.PromptCacheKey, r.Session = "k1", "hdr" }, want: `"k1"`},
		{name: "chat key in extra not doubled", api: "chat", openAI: true, req: func(r *llm.Request) {
			r.Session = "user-42"
			r.Extra = []llm.Field{{Name: "prompt_cache_key", Value: json.RawMessage(`"x"`)}}
		}, want: `"x"`},
		{name: "chat openai no session", api: "chat", openAI: true, req: func(*llm.Request) {}},
		{name: "responses openai derived", api: "responses", openAI: true, req: func(r *llm.Request) { r.Session = "user-42" }, want: derived},
		{name: "responses compatible none", api: "responses", req: func(r *llm.Request) { r.Session = "user-42" }},
		{name: "responses client key", api: "responses", req: func(r *llm.Request) { r.PromptCacheKey = "k1" }, want: `"k1"`},
		{name: "native derived", api: "responses", openAI: true, req: func(r *llm.Request) {
			r.Session = "user-42"
			r.Native = &llm.Native{Wire: "responses", Fields: []llm.Field{{Name: "model", Value: json.RawMessage(`"x"`)},
				{Name: "input", Value: json.RawMessage(`"hi"`)}}}
		}, want: derived},
		{name: "native null key derived", api: "responses", openAI: true, req: func(r *llm.Request) {
			r.Session = "user-42"
			r.Native = &llm.Native{Wire: "responses", Fields: []llm.Field{{Name: "input", Value: json.RawMessage(`"hi"`)},
				{Name: "prompt_cache_key", Value: json.RawMessage(`null`)}}}
		}, want: derived},
		{name: "native client key kept once", api: "responses", openAI: true, req: func(r *llm.Request) {
			r.PromptCacheKey, r.Session = "k1", "k1"
			r.Native = &llm.Native{Wire: "responses", Fields: []llm.Field{{Name: "input", Value: json.RawMessage(`"hi"`)},
				{Name: "prompt_cache_key", Value: json.RawMessage(`"k1"`)}}}
		}, want: `"k1"`},
		{name: "native compatible none", api: "responses", req: func(r *llm.Request) {
			r.Session = "user-42"
			r.Native = &llm.Native{Wire: "responses", Fields: []llm.Field{{Name: "input", Value: json.RawMessage(`"hi"`)}}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := testRequest()
			tt.req(req)
			body := sent(t, tt.api, tt.openAI, req)
			if got := member(t, body, "prompt_cache_key"); got != tt.want {
				t.Errorf("prompt_cache_key: got %q, want %q in %s", got, tt.want, body)
			}
			if strings.Contains(body, "user-42") {
				t.Errorf("the raw conversation key went upstream: %s", body)
			}
		})
	}
}

func TestThinkingBudgetEffort(t *testing.T) {
	effort := json.RawMessage(`"high"`)
	tests := []struct {
		name   string
		api    string
		openAI bool
		model  string
		budget *int
		extra  []llm.Field
		want   string // the effort's raw value, "" none
	}{
		{name: "low", api: "chat", openAI: true, model: "gpt-5", budget: budget(1024), want: `"low"`},
		{name: "medium", api: "chat", openAI: true, model: "o3", budget: budget(4096), want: `"medium"`},
		{name: "high", api: "chat", openAI: true, model: "o4-mini", budget: budget(16384), want: `"high"`},
		{name: "off", api: "chat", openAI: true, model: "gpt-5", budget: budget(0)},
		{name: "model decides", api: "chat", openAI: true, model: "gpt-5", budget: budget(-1)},
		{name: "no budget", api: "chat", openAI: true, model: "gpt-5"},
		{name: "not a reasoning model", api: "chat", openAI: true, model: "gpt-4.1", budget: budget(8000)},
		{name: "gpt-4o", api: "chat", openAI: true, model: "gpt-4o", budget: budget(8000)},
		{name: "compatible", api: "chat", model: "o3", budget: budget(8000)},
		{name: "client's effort", api: "chat", openAI: true, model: "o3",
			extra: []llm.Field{{Name: "reasoning_effort", Value: effort}}, want: `"high"`},
		{name: "budget over the Gemini wire's effort", api: "chat", openAI: true, model: "o3", budget: budget(2048),
			extra: []llm.Field{{Name: "reasoning_effort", Value: json.RawMessage(`"medium"`)}}, want: `"low"`},
		{name: "Gemini wire's effort kept without a budget's", api: "chat", openAI: true, model: "gpt-4.1", budget: budget(2048),
			extra: []llm.Field{{Name: "reasoning_effort", Value: json.RawMessage(`"medium"`)}}, want: `"medium"`},
		{name: "responses medium", api: "responses", openAI: true, model: "gpt-5-codex", budget: budget(10000), want: `"medium"`},
		{name: "responses not reasoning", api: "responses", openAI: true, model: "gpt-4.1", budget: budget(10000)},
		{name: "responses client's effort", api: "responses", openAI: true, model: "o3",
			extra: []llm.Field{{Name: "reasoning_effort", Value: effort}}, want: `"high"`},
		{name: "responses budget over the Gemini wire's effort", api: "responses", openAI: true, model: "gpt-5", budget: budget(20000),
			extra: []llm.Field{{Name: "reasoning_effort", Value: json.RawMessage(`"low"`)}}, want: `"high"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := testRequest()
			req.Model, req.ThinkingBudget, req.Extra = tt.model, tt.budget, tt.extra
			body := sent(t, tt.api, tt.openAI, req)
			got := member(t, body, "reasoning_effort")
			if tt.api == "responses" {
				if got != "" {
					t.Fatalf("reasoning_effort sent to the Responses API: %s", body)
				}
				var r struct {
					Effort json.RawMessage `json:"effort"`
				}
				if raw := member(t, body, "reasoning"); raw != "" {
					if err := json.Unmarshal([]byte(raw), &r); err != nil {
						t.Fatal(err)
					}
				}
				got = string(r.Effort)
			}
			if got != tt.want {
				t.Errorf("effort: got %q, want %q in %s", got, tt.want, body)
			}
		})
	}
}

// markedRequest has a breakpoint on every block that can carry one, and reasoning of every
// wire.
func markedRequest() *llm.Request {
	c := func() *llm.Cache { return &llm.Cache{TTL: "1h"} }
	return &llm.Request{
		Model: "gpt-5",
		Tools: []llm.Tool{{Name: "look", Parameters: json.RawMessage(`{"type":"object"}`), Cache: c()}},
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Parts: []llm.Part{{Type: llm.PartText, Text: "sys", Cache: c()}}},
			{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "hi", Cache: c()}}},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "look", Arguments: "{}", Cache: c()}},
				Reasoning: []llm.Reasoning{
					{ID: "rs_1", Text: "mine", Encrypted: "gAAAAAown", Wire: "responses"},
					{ID: "rs_2", Text: "tools round", Encrypted: "gAAAAAround"},
					{Text: "claude", Encrypted: "EqAnthropicSig", Wire: "anthropic"},
					{Text: "gemini", Encrypted: "CiGeminiSig", Wire: "gemini"},
				}},
			{Role: llm.RoleTool, ToolCallID: "c1", Parts: []llm.Part{{Type: llm.PartText, Text: "ok"}}, Cache: c()},
		},
	}
}

// OpenAI caches by itself and refuses unknown members: a breakpoint never goes upstream,
// and the body is the one of the same request without them.
func TestCacheMarksNotSent(t *testing.T) {
	for _, api := range []string{"chat", "responses"} {
		t.Run(api, func(t *testing.T) {
			body := sent(t, api, true, markedRequest())
			if strings.Contains(body, "cache_control") || strings.Contains(body, "cachePoint") || strings.Contains(body, "ttl") {
				t.Fatalf("a breakpoint went upstream: %s", body)
			}
			plain := markedRequest()
			plain.Tools[0].Cache = nil
			for i := range plain.Messages {
				m := &plain.Messages[i]
				m.Cache = nil
				for j := range m.Parts {
					m.Parts[j].Cache = nil
				}
				for j := range m.ToolCalls {
					m.ToolCalls[j].Cache = nil
				}
			}
			if want := sent(t, api, true, plain); body != want {
				t.Errorf("got\n%s\nwant\n%s", body, want)
			}
		})
	}
}

// Only OpenAI's own reasoning items go back to a Responses upstream: another provider's
// signature in encrypted_content is a 400.
func TestForeignReasoningNotSent(t *testing.T) {
	body := sent(t, "responses", true, markedRequest())
	for _, want := range []string{`"gAAAAAown"`, `"gAAAAAround"`} {
		if !strings.Contains(body, want) {
			t.Errorf("reasoning %s missing from %s", want, body)
		}
	}
	for _, foreign := range []string{"EqAnthropicSig", "CiGeminiSig", "claude", "gemini"} {
		if strings.Contains(body, foreign) {
			t.Errorf("foreign reasoning %s sent: %s", foreign, body)
		}
	}
}
