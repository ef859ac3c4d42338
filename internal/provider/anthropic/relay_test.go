package anthropic

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
	"github.com/sluice-gw/sluice/internal/redact"
	"github.com/sluice-gw/sluice/internal/relay"
)

type sinkFunc func(ev *llm.Event) error

func (f sinkFunc) Event(ev *llm.Event) error { return f(ev) }

// TestRelayReleasesCutArguments runs the truncated-tool fixture through the real relay with
// the default redaction rules, as the server does: the client gets the call whole at the end
// of the round with the arguments as they came (invalid JSON), then finish length. Nothing on
// the way turns them into {}.
func TestRelayReleasesCutArguments(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "anthropic-truncated-tool-json.sse"))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := redact.Compile(redact.Config{})
	if err != nil {
		t.Fatal(err)
	}
	u := newUpstream(t, providertest.SSE(string(raw)))
	var calls []llm.ToolDelta
	var finish []string
	sink := sinkFunc(func(ev *llm.Event) error {
		switch ev.Type {
		case llm.EvToolCall:
			calls = append(calls, ev.Tool)
		case llm.EvDone:
			finish = append(finish, ev.Finish)
		}
		return nil
	})
	resp, err := relay.Run(context.Background(), openStream(t, u.client(Config{})), sink,
		relay.Options{NewWindow: func() relay.Window { return rules.NewWindow() }, RedactJSON: rules.RedactJSON})
	if err != nil {
		t.Fatalf("relay: got %v, want a complete round", err)
	}
	const args = "{\"filename\": \"taxes.txt\", \"lines_of_text\": [\n\"# COMPREHENSIVE TAX GUIDE FOR INDIVIDUALS WITH MULTIPLE W-2s\",\n\"\",\n\"## INTRODUCTION\",\n\"\",\n\"Filing taxes"
	if len(calls) != 1 || calls[0].ID != "toolu_01EKqbqmZrGRXy18eN7m9kvY" || calls[0].Name != "make_file" || calls[0].Args != args {
		t.Errorf("sink got calls %+v, want make_file whole with the cut arguments", calls)
	}
	if len(finish) != 1 || finish[0] != "length" {
		t.Errorf("sink got finish %v, want [length]", finish)
	}
	if c := resp.Choices[0]; len(c.ToolCalls) != 1 || c.ToolCalls[0].Arguments != args || c.Finish != "length" {
		t.Errorf("response: got %+v, want the cut arguments and finish length", c)
	}
	if u := resp.Usage; u.Estimated || u.PromptTokens != 450 || u.CompletionTokens != 124 {
		t.Errorf("usage: got %+v, want the reported 450/124", u)
	}
}
