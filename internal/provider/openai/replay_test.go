package openai

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// assemble merges events the way the relay does, so the tests can state facts about the
// answer rather than about its fragmentation.
func assemble(evs []llm.Event) *llm.Response {
	r := &llm.Response{}
	for _, e := range evs {
		switch e.Type {
		case llm.EvStart:
			r.ID, r.Model = e.ID, e.Model
		case llm.EvText:
			r.Choice(e.Choice).Text += e.Text
		case llm.EvRefusal:
			r.Choice(e.Choice).Refusal += e.Text
		case llm.EvReasoning:
			c := r.Choice(e.Choice)
			c.Reasoning += e.Text
			c.ReasoningField = e.Field
		case llm.EvToolCall:
			c := r.Choice(e.Choice)
			for len(c.ToolCalls) <= e.Tool.Index {
				c.ToolCalls = append(c.ToolCalls, llm.ToolCall{})
			}
			tc := &c.ToolCalls[e.Tool.Index]
			tc.ID += e.Tool.ID
			tc.Name += e.Tool.Name
			tc.Arguments += e.Tool.Args
		case llm.EvLogprobs:
			c := r.Choice(e.Choice)
			c.Logprobs = append(c.Logprobs, e.Raw)
		case llm.EvUsage:
			r.Usage = *e.Usage
		case llm.EvDone:
			r.Choice(e.Choice).Finish = e.Finish
		}
	}
	return r
}

func wantEOF(t *testing.T, err error) {
	t.Helper()
	if err != io.EOF {
		t.Fatalf("end: got %v, want io.EOF", err)
	}
}

func wantKind(t *testing.T, err error, k llm.Kind) *llm.Error {
	t.Helper()
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != k {
		t.Fatalf("end: got %v (kind %v), want kind %v", err, llm.KindOf(err), k)
	}
	return le
}

func wantUsage(t *testing.T, got llm.Usage, prompt, completion, total int) {
	t.Helper()
	if got.PromptTokens != prompt || got.CompletionTokens != completion || got.TotalTokens != total {
		t.Errorf("usage: got %d/%d/%d, want %d/%d/%d", got.PromptTokens, got.CompletionTokens, got.TotalTokens, prompt, completion, total)
	}
}

func wantArgs(t *testing.T, tc llm.ToolCall, id, name string, want map[string]string) {
	t.Helper()
	if tc.ID != id || tc.Name != name {
		t.Errorf("tool call: got id %q name %q, want %q %q", tc.ID, tc.Name, id, name)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(tc.Arguments), &got); err != nil {
		t.Fatalf("tool call %s arguments %q: got parse error %v, want JSON", name, tc.Arguments, err)
	}
	if len(got) != len(want) {
		t.Errorf("tool call %s arguments: got %v, want %v", name, got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("tool call %s argument %s: got %q, want %q", name, k, got[k], v)
		}
	}
}

func TestReplay(t *testing.T) {
	tests := []struct {
		name  string
		check func(t *testing.T, evs []llm.Event, r *llm.Response, end error)
	}{
		{"openai-chat-text", func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			wantEOF(t, end)
			if evs[0].Type != llm.EvStart || r.ID != "chatcmpl-ABfw031mOJeYCSHe4yI2ZjOA6kMJL" || r.Model != "gpt-4o-2024-08-06" {
				t.Errorf("start: got %v %q %q, want start with the upstream id and model", evs[0].Type, r.ID, r.Model)
			}
			const want = "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend checking a reliable weather website or a weather app."
			if len(r.Choices) != 1 || r.Choices[0].Text != want || r.Choices[0].Finish != "stop" {
				t.Errorf("got %+v, want one choice with the text and finish stop", r.Choices)
			}
			wantUsage(t, r.Usage, 14, 30, 44)
		}},
		{"openai-chat-tool-call", func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			wantEOF(t, end)
			c := r.Choices[0]
			if len(c.ToolCalls) != 1 || c.Finish != "tool_calls" || c.Text != "" {
				t.Fatalf("got %+v, want one tool call, finish tool_calls, no text", c)
			}
			wantArgs(t, c.ToolCalls[0], "call_c91SqDXlYFuETYv8mUHzz6pp", "GetWeatherArgs",
				map[string]string{"city": "Edinburgh", "country": "UK", "units": "c"})
			wantUsage(t, r.Usage, 76, 24, 100)
		}},
		{"openai-chat-tool-call-2", func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			wantEOF(t, end)
			c := r.Choices[0]
			if len(c.ToolCalls) != 1 || c.Finish != "tool_calls" {
				t.Fatalf("got %+v, want one tool call, finish tool_calls", c)
			}
			wantArgs(t, c.ToolCalls[0], "call_ZR5UUuTt3pf61kjwAJIYdVMj", "get_capital", map[string]string{"country": "UK"})
			wantUsage(t, r.Usage, 53, 15, 68)
		}},
		{"openai-chat-parallel-tool-calls", func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			wantEOF(t, end)
			c := r.Choices[0]
			if len(c.ToolCalls) != 2 || c.Finish != "tool_calls" {
				t.Fatalf("got %d tool calls, finish %q, want 2, tool_calls", len(c.ToolCalls), c.Finish)
			}
			wantArgs(t, c.ToolCalls[0], "call_JMW1whyEaYG438VE1OIflxA2", "GetWeatherArgs",
				map[string]string{"city": "Edinburgh", "country": "GB", "units": "c"})
			wantArgs(t, c.ToolCalls[1], "call_DNYTawLBoN8fj3KN6qU9N1Ou", "get_stock_price",
				map[string]string{"ticker": "AAPL", "exchange": "NASDAQ"})
			wantUsage(t, r.Usage, 149, 60, 209)
		}},
		{"openai-chat-n3-choices", func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			wantEOF(t, end)
			if len(r.Choices) != 3 {
				t.Fatalf("got %d choices, want 3", len(r.Choices))
			}
			for i, temp := range []float64{65, 61, 59} {
				c := r.Choices[i]
				var v struct {
					City        string  `json:"city"`
					Temperature float64 `json:"temperature"`
				}
				if err := json.Unmarshal([]byte(c.Text), &v); err != nil || v.City != "San Francisco" || v.Temperature != temp || c.Finish != "stop" {
					t.Errorf("choice %d: got %q finish %q (%v), want San Francisco at %v, stop", i, c.Text, c.Finish, err, temp)
				}
			}
			starts := 0
			for _, e := range evs {
				if e.Type == llm.EvStart {
					starts++
				}
			}
			if starts != 1 {
				t.Errorf("got %d start events, want 1", starts)
			}
			wantUsage(t, r.Usage, 79, 42, 121)
		}},
		{"openai-chat-length", func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			wantEOF(t, end)
			if c := r.Choices[0]; c.Text != `{"` || c.Finish != "length" {
				t.Errorf("got text %q finish %q, want {\" and length", c.Text, c.Finish)
			}
			wantUsage(t, r.Usage, 79, 1, 80)
		}},
		{"openai-chat-refusal", func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			wantEOF(t, end)
			if c := r.Choices[0]; c.Refusal != "I'm sorry, I can't assist with that request." || c.Text != "" || c.Finish != "stop" {
				t.Errorf("got refusal %q text %q finish %q, want the refusal only, stop", c.Refusal, c.Text, c.Finish)
			}
			wantUsage(t, r.Usage, 79, 11, 90)
		}},
		{"openai-chat-logprobs", func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			wantEOF(t, end)
			c := r.Choices[0]
			if c.Text != "Foo!" || len(c.Logprobs) != 3 {
				t.Fatalf("got text %q and %d logprobs, want Foo! and 3", c.Text, len(c.Logprobs))
			}
			var lp struct {
				Content []struct {
					Token string `json:"token"`
				} `json:"content"`
			}
			if err := json.Unmarshal(c.Logprobs[1], &lp); err != nil || len(lp.Content) != 1 || lp.Content[0].Token != "Foo" {
				t.Errorf("logprobs[1]: got %s (%v), want the token Foo", c.Logprobs[1], err)
			}
			// Logprobs come before the text they describe.
			for i, e := range evs {
				if e.Type == llm.EvText && (i == 0 || evs[i-1].Type != llm.EvLogprobs) {
					t.Errorf("event %d: text %q not preceded by its logprobs", i, e.Text)
				}
			}
			wantUsage(t, r.Usage, 9, 2, 11)
		}},
		{"groq-chat-instream-error", func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			// status_code 400 inside a 200 stream is the upstream failing, not the request.
			le := wantKind(t, end, llm.Unavailable)
			if le.Code != "tool_use_failed" || le.Type != "invalid_request_error" || !strings.Contains(le.Message, "Tool call validation failed") {
				t.Errorf("got code %q type %q message %q, want Groq's", le.Code, le.Type, le.Message)
			}
			c := r.Choices[0]
			if !strings.HasPrefix(c.Reasoning, "We need to call the tool with invalid parameters first") || c.ReasoningField != "reasoning" || c.Finish != "" {
				t.Errorf("got reasoning %.40q field %q finish %q, want Groq's reasoning, no finish", c.Reasoning, c.ReasoningField, c.Finish)
			}
		}},
		{"openai-chat-instream-server-error", func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			le := wantKind(t, end, llm.Unavailable)
			if le.Type != "server_error" || !strings.Contains(le.Message, "The server had an error") {
				t.Errorf("got type %q message %q, want server_error", le.Type, le.Message)
			}
			if r.Choices[0].Text != "Partial ans" {
				t.Errorf("got text %q, want Partial ans", r.Choices[0].Text)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", tt.name+".sse"))
			if err != nil {
				t.Fatal(err)
			}
			u := newUpstream(t, providertest.SSE(string(raw)))
			evs, end := providertest.Drain(t, openStream(t, u.client(Config{})))
			for i, e := range evs {
				if e.Type == 0 {
					t.Errorf("event %d: got no type", i)
				}
			}
			tt.check(t, evs, assemble(evs), end)

			got := transcript(evs, end)
			golden := filepath.Join("testdata", tt.name+".events.golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("transcript differs from %s:\ngot\n%s\nwant\n%s", golden, got, want)
			}
		})
	}
}
