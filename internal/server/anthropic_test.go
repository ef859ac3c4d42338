package server_test

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/mockllm"
)

const anthropicFixtures = "../provider/anthropic/testdata"

// anthropicGateway serves alias "claude" from the mock speaking the Anthropic wire, and
// "mixed" from an Anthropic target that fails after message_start, then an OpenAI one.
func anthropicGateway(t *testing.T) *gateway {
	return anthropicMock(t, `
  claude: [anth/echo]
  mixed: ["anth/text?fail=error", "mock/text?len=40"]
  claude-then-openai: [anth/echo, mock/echo]
`)
}

// anthropicMock serves the models yaml lists from the mock, as provider anth speaking the
// Anthropic wire and mock speaking Chat.
func anthropicMock(t *testing.T, models string) *gateway {
	t.Helper()
	mock := mockllm.New(mockllm.Options{FixturesDir: anthropicFixtures})
	ms := httptest.NewServer(mock)
	t.Cleanup(ms.Close)
	gs := serveConfig(t, `
providers:
  anth: {kind: anthropic, base_url: "${MOCK_URL}", api_key: sk-ant-test}
  mock: {kind: openai-compatible, base_url: "${MOCK_URL}/v1"}
models:`+models, map[string]string{"MOCK_URL": ms.URL})
	t.Cleanup(gs.Close)
	return &gateway{url: gs.URL, mock: mock}
}

// anthropicReference reads a recorded Anthropic stream the simple way: its text, its tool
// calls' names and arguments, its stop reason.
func anthropicReference(t *testing.T, file string) (text string, calls []toolCallDelta, stop string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(anthropicFixtures, file))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		d, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type  string `json:"type"`
			Block struct {
				Type, Name, ID string
			} `json:"content_block"`
			Delta struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
		}
		if json.Unmarshal([]byte(d), &ev) != nil {
			continue
		}
		switch {
		case ev.Type == "content_block_start" && ev.Block.Type == "tool_use":
			c := toolCallDelta{Index: len(calls), ID: ev.Block.ID, Type: "function"}
			c.Function.Name = ev.Block.Name
			calls = append(calls, c)
		case ev.Delta.Type == "text_delta":
			text += ev.Delta.Text
		case ev.Delta.Type == "input_json_delta":
			calls[len(calls)-1].Function.Arguments += ev.Delta.PartialJSON
		case ev.Type == "message_delta":
			stop = ev.Delta.StopReason
		}
	}
	return text, calls, stop
}

// TestAnthropicRecordedStreams replays each Anthropic recording through the adapter, the
// relay and the Chat Completions encoder: a Chat client gets the recorded text, each tool call
// whole in one delta, the finish reason in Chat terms, and the usage.
func TestAnthropicRecordedStreams(t *testing.T) {
	finish := map[string]string{"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length", "refusal": "content_filter"}
	g := anthropicGateway(t)
	for _, file := range []string{"anthropic-text.sse", "anthropic-tool-use.sse", "anthropic-text-and-tool-no-args.sse",
		"anthropic-thinking.sse", "anthropic-refusal.sse", "anthropic-truncated-tool-json.sse"} {
		t.Run(file, func(t *testing.T) {
			text, calls, stop := anthropicReference(t, file)
			resp := g.post(t, chatBody("anth/replay?file="+file, true, `,"stream_options":{"include_usage":true}`))
			if got := resp.Header.Get("X-Sluice-Target"); got != "anth/replay?file="+file {
				t.Errorf("X-Sluice-Target %q", got)
			}
			fs := frames(t, resp.Body)
			golden(t, strings.TrimSuffix(file, ".sse")+".want.sse", []byte("data: "+strings.Join(fs, "\n\ndata: ")+"\n\n"))
			p := parse(t, fs)
			if !p.done || p.err != nil {
				t.Fatalf("got done %v err %v, want a whole stream", p.done, p.err)
			}
			if p.text[0] != text {
				t.Errorf("text %q, want %q", p.text[0], text)
			}
			if p.finish[0] != finish[stop] {
				t.Errorf("finish %q, want %q (from %s)", p.finish[0], finish[stop], stop)
			}
			if len(p.calls[0]) != len(calls) {
				t.Fatalf("got %d tool call deltas, want %d calls each whole in one", len(p.calls[0]), len(calls))
			}
			for i, c := range p.calls[0] {
				want := calls[i].Function.Arguments
				if want == "" && stop != "max_tokens" {
					want = "{}" // a call without arguments, as OpenAI sends it
				}
				if c.ID != calls[i].ID || c.Function.Name != calls[i].Function.Name || c.Function.Arguments != want {
					t.Errorf("call %d: %+v, want id %s name %s arguments %q", i, c, calls[i].ID, calls[i].Function.Name, want)
				}
			}
			if u := p.usage; u == nil || u.Usage.PromptTokens == 0 || u.Usage.TotalTokens != u.Usage.PromptTokens+u.Usage.CompletionTokens {
				t.Errorf("usage %+v, want the recorded tokens", p.usage)
			}
		})
	}
	t.Run("thinking", func(t *testing.T) {
		p := parse(t, frames(t, g.post(t, chatBody("anth/replay?file=anthropic-thinking.sse", true, "")).Body))
		if p.reasoning[0] == "" {
			t.Error("the thinking did not reach the client as reasoning")
		}
	})
}

// TestAnthropicOverloadedFallsBack: an overloaded_error after message_start is a failure
// before commit; the client gets one clean stream from the next target and no Anthropic
// preamble.
func TestAnthropicOverloadedFallsBack(t *testing.T) {
	g := anthropicGateway(t)
	resp := g.post(t, chatBody("mixed", true, ""))
	if got := resp.Header.Get("X-Sluice-Target"); got != "mock/text?len=40" {
		t.Errorf("X-Sluice-Target %q, want the second target", got)
	}
	if got := resp.Header.Get("X-Sluice-Attempts"); got != "2" {
		t.Errorf("X-Sluice-Attempts %q, want 2", got)
	}
	p := parse(t, frames(t, resp.Body))
	if !p.done || p.err != nil || len(p.text[0]) != 40 || p.roles[0] != 1 {
		t.Errorf("done %v err %v text %q roles %d: want one clean 40-byte answer", p.done, p.err, p.text[0], p.roles[0])
	}
	if g.mock.Calls("text?fail=error") != 1 {
		t.Errorf("the Anthropic target was called %d times, want 1", g.mock.Calls("text?fail=error"))
	}
}

// TestUnsupportedMovesOn: a request Anthropic's API cannot carry (n > 1) is not sent to it;
// the chain moves on to a target that can, without a strike against the first; with no such
// target the client gets a 400 that says why.
func TestUnsupportedMovesOn(t *testing.T) {
	g := anthropicGateway(t)
	for range 5 { // more than the health threshold: no cooldown may follow
		resp := g.post(t, chatBody("claude-then-openai", false, `,"n":2`))
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || resp.Header.Get("X-Sluice-Target") != "mock/echo" || strings.Count(string(body), `"finish_reason"`) != 2 {
			t.Fatalf("got %d from %q: %s, want two choices from mock/echo", resp.StatusCode, resp.Header.Get("X-Sluice-Target"), body)
		}
	}
	if n := g.mock.Calls("echo"); n != 5 {
		t.Errorf("the OpenAI target was called %d times, want 5", n)
	}
	resp := g.post(t, chatBody("claude", false, ""))
	if resp.StatusCode != 200 {
		t.Errorf("after the refusals the Anthropic target answers %d, want 200 (no cooldown)", resp.StatusCode)
	}
	resp = g.post(t, chatBody("claude", false, `,"n":2`))
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(body), "unsupported_by_targets") || !strings.Contains(string(body), "one choice") {
		t.Errorf("alias without a target that can: got %d %s, want 400 unsupported_by_targets naming the reason", resp.StatusCode, body)
	}
}
