package relay

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Reasoning ends where the answer starts: the reasoning window's held tail goes out before
// the first answer text, never after the answer at the finish.
func TestReasoningTailBeforeAnswer(t *testing.T) {
	reason := func(s string) llm.Event { return llm.Event{Type: llm.EvReasoning, Text: s, Field: "reasoning"} }
	tests := []struct {
		name string
		evs  []llm.Event
		o    Options
	}{
		{"reasoning field", []llm.Event{reason("Let me think about"), reason(" it carefully"), text(0, "The answer"),
			text(0, " is 4."), {Type: llm.EvDone, Finish: "stop"}}, redacting()},
		{"coalesced", []llm.Event{reason("Let me"), reason(" think about"), reason(" it carefully"), text(0, "The answer"),
			text(0, " is 4."), {Type: llm.EvDone, Finish: "stop"}},
			func() Options { o := redacting(); o.Coalesce = Coalesce{Events: 8}; return o }()},
		{"think filter", []llm.Event{text(0, "<think>Let me think"), text(0, " about it carefully</think>The answer"),
			text(0, " is 4."), {Type: llm.EvDone, Finish: "stop"}},
			func() Options { o := redacting(); o.ThinkFilter = true; return o }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &record{}
			resp, err := Run(context.Background(), &script{evs: tt.evs}, sink, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, ev := range sink.evs {
				if ev.Type == llm.EvText || ev.Type == llm.EvReasoning {
					if k := ev.Type.String(); len(kinds) == 0 || kinds[len(kinds)-1] != k {
						kinds = append(kinds, k)
					}
				}
			}
			if got := strings.Join(kinds, ","); got != "reasoning,text" {
				t.Errorf("got %s, want all reasoning, then all text", got)
			}
			if c := resp.Choices[0]; c.Reasoning != "Let me think about it carefully" || c.Text != "The answer is 4." {
				t.Errorf("got reasoning %q text %q, want both whole", c.Reasoning, c.Text)
			}
		})
	}
}
