package anthropic

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

func wantUsage(t *testing.T, got llm.Usage, want llm.Usage) {
	t.Helper()
	if got != want {
		t.Errorf("usage: got %+v, want %+v", got, want)
	}
}

func wantCall(t *testing.T, tc llm.ToolCall, id, name, args string) {
	t.Helper()
	if tc.ID != id || tc.Name != name || tc.Arguments != args {
		t.Errorf("tool call: got %q %q %q, want %q %q %q", tc.ID, tc.Name, tc.Arguments, id, name, args)
	}
}

// wantFirstFragment checks the Chat shape of a streamed call: its first fragment names it
// with no arguments, later ones carry only non-empty arguments.
func wantFirstFragment(t *testing.T, evs []llm.Event, index int, id, name string) {
	t.Helper()
	first := true
	for _, e := range evs {
		if e.Type != llm.EvToolCall || e.Tool.Index != index {
			continue
		}
		if first && (e.Tool.ID != id || e.Tool.Name != name || e.Tool.Args != "") {
			t.Errorf("first fragment: got %+v, want id %q name %q and no arguments", e.Tool, id, name)
		}
		if !first && (e.Tool.ID != "" || e.Tool.Name != "" || e.Tool.Args == "") {
			t.Errorf("later fragment: got %+v, want arguments only", e.Tool)
		}
		first = false
	}
	if first {
		t.Errorf("got no fragment of tool call %d", index)
	}
}

func TestReplay(t *testing.T) {
	tests := []struct {
		name  string
		check func(t *testing.T, evs []llm.Event, r *llm.Response, end error)
	}{
		{"anthropic-text", func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			wantEOF(t, end)
			if evs[0].Type != llm.EvStart || r.ID != "msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK" || r.Model != "claude-3-opus-latest" {
				t.Errorf("start: got %v %q %q, want start with the upstream id and model", evs[0].Type, r.ID, r.Model)
			}
			if len(r.Choices) != 1 || r.Choices[0].Text != "Hello there!" || r.Choices[0].Finish != "stop" {
				t.Errorf("got %+v, want one choice, Hello there!, finish stop", r.Choices)
			}
			wantUsage(t, r.Usage, llm.Usage{PromptTokens: 11, CompletionTokens: 6, TotalTokens: 17})
		}},
		{"anthropic-tool-use", func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			wantEOF(t, end)
			c := r.Choices[0]
			if c.Text != "I'll check the current weather in Paris for you." || c.Finish != "tool_calls" || len(c.ToolCalls) != 1 {
				t.Fatalf("got %+v, want the text, one tool call, finish tool_calls", c)
			}
			// The fragments were "", `{"locati`, `on": "P`, `ar`, `is"}`.
			wantCall(t, c.ToolCalls[0], "toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", `{"location": "Paris"}`)
			wantFirstFragment(t, evs, 0, "toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather")
			wantUsage(t, r.Usage, llm.Usage{PromptTokens: 377, CompletionTokens: 65, TotalTokens: 442})
		}},
		{"anthropic-text-and-tool-no-args", func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			wantEOF(t, end)
			c := r.Choices[0]
			if c.Text != "I'll update the issue list for you." || c.Finish != "tool_calls" || len(c.ToolCalls) != 1 {
				t.Fatalf("got %+v, want the text, one tool call, finish tool_calls", c)
			}
			// No input_json_delta but an empty one: "{}", as OpenAI sends for a call without
			// arguments, never "".
			wantCall(t, c.ToolCalls[0], "toolu_01QE1WLsSVp5hy5Q3GmGTmjP", "updateIssueList", "{}")
			wantFirstFragment(t, evs, 0, "toolu_01QE1WLsSVp5hy5Q3GmGTmjP", "updateIssueList")
			wantUsage(t, r.Usage, llm.Usage{PromptTokens: 565, CompletionTokens: 48, TotalTokens: 613})
		}},
		{"anthropic-truncated-tool-json", func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			wantEOF(t, end)
			c := r.Choices[0]
			if c.Finish != "length" || len(c.ToolCalls) != 1 {
				t.Fatalf("got %+v, want one tool call, finish length", c)
			}
			// The arguments as they came, invalid: never an empty object.
			const args = "{\"filename\": \"taxes.txt\", \"lines_of_text\": [\n\"# COMPREHENSIVE TAX GUIDE FOR INDIVIDUALS WITH MULTIPLE W-2s\",\n\"\",\n\"## INTRODUCTION\",\n\"\",\n\"Filing taxes"
			wantCall(t, c.ToolCalls[0], "toolu_01EKqbqmZrGRXy18eN7m9kvY", "make_file", args)
			if json.Valid([]byte(c.ToolCalls[0].Arguments)) {
				t.Error("got valid JSON arguments, want the cut ones")
			}
			if !strings.HasPrefix(c.Text, "I'll create a comprehensive tax guide") {
				t.Errorf("text: got %q", c.Text)
			}
			wantUsage(t, r.Usage, llm.Usage{PromptTokens: 450, CompletionTokens: 124, TotalTokens: 574})
		}},
		{"anthropic-refusal", func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			wantEOF(t, end)
			if c := r.Choices[0]; c.Finish != "content_filter" || c.Text != "" || c.Refusal != "" {
				t.Errorf("got %+v, want no text, finish content_filter", c)
			}
			wantUsage(t, r.Usage, llm.Usage{PromptTokens: 20, CompletionTokens: 0, TotalTokens: 20})
		}},
		{"anthropic-thinking", func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			wantEOF(t, end)
			c := r.Choices[0]
			const thought = "This is a straightforward question about pedestrian safety. I should provide clear, helpful advice about how to safely cross a street. This is basic safety information that could help prevent accidents."
			if c.Reasoning != thought || c.ReasoningField != "reasoning_content" {
				t.Errorf("reasoning: got %q in %q, want %q in reasoning_content", c.Reasoning, c.ReasoningField, thought)
			}
			var sigs []string
			lastReasoning, firstText := -1, -1
			for i, e := range evs {
				if e.Type == llm.EvReasoning {
					lastReasoning = i
					if e.Encrypted != "" {
						sigs = append(sigs, e.Encrypted)
						if e.Text != "" {
							t.Errorf("signature event carries text %q", e.Text)
						}
					}
				}
				if e.Type == llm.EvText && firstText < 0 {
					firstText = i
				}
			}
			if len(sigs) != 1 || !strings.HasPrefix(sigs[0], "EvMCCkYICxgCKkCHP2cSuEdcJK") {
				t.Errorf("signatures: got %q, want one, the block's", sigs)
			}
			if lastReasoning > firstText {
				t.Errorf("reasoning event %d after the first text %d, want the thinking block first", lastReasoning, firstText)
			}
			if !strings.HasPrefix(c.Text, "Here are the basic steps for safely crossing the street") || c.Finish != "stop" {
				t.Errorf("got text %.50q finish %q", c.Text, c.Finish)
			}
			wantUsage(t, r.Usage, llm.Usage{PromptTokens: 43, CompletionTokens: 282, TotalTokens: 325})
		}},
		{"anthropic-instream-overloaded-error", func(t *testing.T, evs []llm.Event, r *llm.Response, end error) {
			le := wantKind(t, end, llm.Unavailable)
			if le.Type != "overloaded_error" || !strings.Contains(le.Message, "Overloaded") || !llm.Retryable(le.Kind) {
				t.Errorf("got type %q message %q, want a retryable overloaded_error", le.Type, le.Message)
			}
			if r.Choices[0].Text != "Partial ans" || r.Choices[0].Finish != "" {
				t.Errorf("got %+v, want the partial text and no finish", r.Choices[0])
			}
			for _, e := range evs {
				if e.Type == llm.EvUsage || e.Type == llm.EvDone {
					t.Errorf("got %v before the error, want none", e.Type)
				}
			}
		}},
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	if len(files) != len(tests) {
		t.Errorf("got %d fixtures and %d cases, want a case per fixture", len(files), len(tests))
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
				if e.Type == 0 || e.Choice != 0 {
					t.Errorf("event %d: got type %v choice %d, want a type and choice 0", i, e.Type, e.Choice)
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
