package providertest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Transcript writes events and the stream's end one per line, the form of the adapters'
// *.events.golden files.
func Transcript(evs []llm.Event, end error) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%s choice=%d", e.Type, e.Choice)
		switch e.Type {
		case llm.EvStart:
			fmt.Fprintf(&b, " id=%q model=%q", e.ID, e.Model)
		case llm.EvText, llm.EvRefusal:
			fmt.Fprintf(&b, " text=%q", e.Text)
		case llm.EvReasoning:
			fmt.Fprintf(&b, " field=%s text=%q encrypted=%q", e.Field, e.Text, e.Encrypted)
		case llm.EvToolCall:
			fmt.Fprintf(&b, " index=%d id=%q name=%q args=%q", e.Tool.Index, e.Tool.ID, e.Tool.Name, e.Tool.Args)
		case llm.EvUsage:
			u := e.Usage
			fmt.Fprintf(&b, " prompt=%d completion=%d total=%d cached=%d cache_write=%d reasoning=%d estimated=%v",
				u.PromptTokens, u.CompletionTokens, u.TotalTokens, u.CachedTokens, u.CacheWriteTokens, u.ReasoningTokens, u.Estimated)
		case llm.EvDone:
			fmt.Fprintf(&b, " finish=%s", e.Finish)
		}
		b.WriteByte('\n')
	}
	var le *llm.Error
	switch {
	case end == io.EOF:
		b.WriteString("eof\n")
	case errors.As(end, &le):
		fmt.Fprintf(&b, "error kind=%s status=%d type=%q message=%q\n", le.Kind, le.Status, le.Type, le.Message)
	default:
		fmt.Fprintf(&b, "error %v\n", end)
	}
	return b.String()
}

// Golden compares got with the file at path, first rewriting it when update is set.
func Golden(t *testing.T, path, got string, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("differs from %s:\ngot\n%s\nwant\n%s", path, got, want)
	}
}

// Assemble builds the response of one round from its events, as the relay does.
func Assemble(evs []llm.Event) *llm.Response {
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
			if e.Encrypted != "" {
				c.Opaque = append(c.Opaque, llm.Reasoning{ID: e.ID, Encrypted: e.Encrypted, Redacted: e.Redacted})
			}
		case llm.EvToolCall:
			c := r.Choice(e.Choice)
			for len(c.ToolCalls) <= e.Tool.Index {
				c.ToolCalls = append(c.ToolCalls, llm.ToolCall{})
			}
			tc := &c.ToolCalls[e.Tool.Index]
			tc.ID += e.Tool.ID
			tc.Name += e.Tool.Name
			tc.Arguments += e.Tool.Args
		case llm.EvUsage:
			r.Usage = *e.Usage
		case llm.EvDone:
			r.Choice(e.Choice).Finish = e.Finish
		}
	}
	return r
}
