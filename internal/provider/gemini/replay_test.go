package gemini

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// TestReplay streams every fixture through the test upstream, with its SSE framing, and
// compares the llm events with the golden transcript; each case checks what matters of it.
func TestReplay(t *testing.T) {
	checks := map[string]func(t *testing.T, r *llm.Response, end error){
		"google-text": func(t *testing.T, r *llm.Response, end error) {
			c := r.Choices[0]
			want := llm.Usage{PromptTokens: 9, CompletionTokens: 208, TotalTokens: 217, ReasoningTokens: 185}
			if end != io.EOF || c.Finish != "stop" || !strings.HasPrefix(c.Text, "There are **3** \"r\"s") || r.Usage != want ||
				len(c.Opaque) != 1 || c.Opaque[0].ID != "" || r.ID != "bH6LaZW8Fp_3nsEPqtaSwQ4" || r.Model != "gemini-3-pro-preview" {
				t.Errorf("got %+v usage %+v id %q model %q, end %v", c, r.Usage, r.ID, r.Model, end)
			}
		},
		"issue-19758-prompt-block": func(t *testing.T, r *llm.Response, end error) {
			if end != io.EOF || len(r.Choices) != 1 || r.Choices[0].Finish != "content_filter" || r.Usage.PromptTokens != 9 {
				t.Errorf("got %+v usage %+v, end %v; want content_filter", r.Choices, r.Usage, end)
			}
		},
		"gemini-parallel-tool-calls": func(t *testing.T, r *llm.Response, end error) {
			c := r.Choices[0]
			want := []llm.ToolCall{{ID: "gemini_call_r-par-1_0_0", Name: "get_weather", Arguments: `{"city":"Paris"}`},
				{ID: "gemini_call_r-par-1_0_1", Name: "get_weather", Arguments: `{"city":"Tokyo"}`}}
			if end != io.EOF || c.Finish != "tool_calls" || len(c.ToolCalls) != 2 || c.ToolCalls[0] != want[0] || c.ToolCalls[1] != want[1] ||
				len(c.Opaque) != 1 || c.Opaque[0] != (llm.Reasoning{ID: "gemini_call_r-par-1_0_0", Encrypted: "CiQBVKhc7sig-paris"}) ||
				r.Usage.CachedTokens != 32 || r.Usage.ReasoningTokens != 104 || r.Usage.CompletionTokens != 128 {
				t.Errorf("got %+v usage %+v, end %v", c, r.Usage, end)
			}
		},
		"gemini-thoughts": func(t *testing.T, r *llm.Response, end error) {
			c := r.Choices[0]
			if end != io.EOF || c.Finish != "length" || c.Text != "Three." || !strings.HasPrefix(c.Reasoning, "**Counting letters**") ||
				c.ReasoningField != "reasoning_content" {
				t.Errorf("got %+v, end %v", c, end)
			}
		},
		"gemini-safety": func(t *testing.T, r *llm.Response, end error) {
			if end != io.EOF || r.Choices[0].Finish != "content_filter" {
				t.Errorf("got %+v, end %v", r.Choices, end)
			}
		},
		"gemini-instream-error": func(t *testing.T, r *llm.Response, end error) {
			le := wantKind(t, end, llm.Unavailable)
			if le.Type != "UNAVAILABLE" || r.Choices[0].Text != "Partial answer" {
				t.Errorf("got %+v, text %q", le, r.Choices[0].Text)
			}
		},
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.chunks.txt"))
	if len(files) != len(checks) {
		t.Fatalf("%d fixtures, %d checks", len(files), len(checks))
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".chunks.txt")
		t.Run(name, func(t *testing.T) {
			u := upstream(t, providertest.SSE(sseBody(t, path)))
			s, err := client(u, Config{}).Stream(context.Background(), testRequest())
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			defer s.Close()
			evs, end := providertest.Drain(t, s)
			checks[name](t, providertest.Assemble(evs), end)
			providertest.Golden(t, filepath.Join("testdata", name+".events.golden"), providertest.Transcript(evs, end), *update)
		})
	}
}
