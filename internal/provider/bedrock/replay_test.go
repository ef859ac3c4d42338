package bedrock

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// fixtureFrames reads a fixture as the frames Bedrock sends: a *.chunks.txt file holds one
// recorded event per line, {"<event-type>": payload}, framed here with the SDK's encoder; a
// *.eventstream.base64.txt file holds the recorded binary stream itself.
func fixtureFrames(t testing.TB, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".eventstream.base64.txt") {
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		return [][]byte{raw}
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var line map[string]json.RawMessage
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || len(line) != 1 {
			t.Fatalf("%s: line %q is not one event", path, sc.Text())
		}
		for typ, payload := range line {
			out = append(out, frame(t, typ, string(payload)))
		}
	}
	return out
}

func fixtures(t testing.TB) []string {
	var out []string
	for _, pat := range []string{"*.chunks.txt", "*.eventstream.base64.txt"} {
		m, _ := filepath.Glob(filepath.Join("testdata", pat))
		out = append(out, m...)
	}
	if len(out) == 0 {
		t.Fatal("no fixtures")
	}
	return out
}

// TestReplay streams every fixture through a signed call to the test upstream and compares
// the llm events with the golden transcript; each case also checks what matters most of it.
func TestReplay(t *testing.T) {
	checks := map[string]func(t *testing.T, r *llm.Response, end error){
		"bedrock-text": func(t *testing.T, r *llm.Response, end error) {
			c := r.Choices[0]
			if end != io.EOF || c.Finish != "stop" || !strings.HasSuffix(c.Text, `are **3** r's in "strawberry."`) ||
				r.Usage.PromptTokens != 22 || r.Usage.CompletionTokens != 55 || r.ID != "req-123" {
				t.Errorf("got %+v, usage %+v, id %q, end %v", c, r.Usage, r.ID, end)
			}
		},
		"bedrock-reasoning": func(t *testing.T, r *llm.Response, end error) {
			c := r.Choices[0]
			if end != io.EOF || !strings.HasPrefix(c.Reasoning, "Let me count") || len(c.Opaque) != 1 ||
				!strings.HasPrefix(c.Opaque[0].Encrypted, "Ep0CCkgICxAB") || c.ReasoningField != "reasoning_content" {
				t.Errorf("got reasoning %q, opaque %+v, end %v", c.Reasoning, c.Opaque, end)
			}
		},
		"bedrock-tool-call": func(t *testing.T, r *llm.Response, end error) {
			// metadata came before messageStop: the finish still carries the usage.
			c := r.Choices[0]
			if end != io.EOF || c.Finish != "tool_calls" || len(c.ToolCalls) != 1 ||
				c.ToolCalls[0] != (llm.ToolCall{ID: "tool-use-id", Name: "test-tool", Arguments: `{"value":"Sparkle Day"}`}) || r.Usage.TotalTokens != 170 {
				t.Errorf("got %+v, usage %+v, end %v", c, r.Usage, end)
			}
		},
		"bedrock-tool-no-args": func(t *testing.T, r *llm.Response, end error) {
			c := r.Choices[0]
			if end != io.EOF || len(c.ToolCalls) != 1 || c.ToolCalls[0].Arguments != "{}" || c.Text != "I'll update the issue list for you." {
				t.Errorf("got %+v, end %v", c, end)
			}
		},
		"bedrock-cache-usage": func(t *testing.T, r *llm.Response, end error) {
			want := llm.Usage{PromptTokens: 2060, CompletionTokens: 3, TotalTokens: 2063, CachedTokens: 1800, CacheWriteTokens: 248, CacheWrite1hTokens: 200}
			if end != io.EOF || r.Usage != want || r.Choices[0].Finish != "length" {
				t.Errorf("got usage %+v finish %q, want %+v length", r.Usage, r.Choices[0].Finish, want)
			}
		},
		"model-stream-error-exception": func(t *testing.T, r *llm.Response, end error) {
			le := wantKind(t, end, llm.Unavailable)
			if le.Type != "modelStreamErrorException" || !strings.Contains(le.Message, "Model Stream Error (model status 500)") {
				t.Errorf("got %+v", le)
			}
		},
	}
	for _, path := range fixtures(t) {
		name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".chunks.txt"), ".eventstream.base64.txt")
		t.Run(name, func(t *testing.T) {
			u := newUpstream(t, frames(fixtureFrames(t, path)...))
			s, err := u.client(Config{}).Stream(context.Background(), testRequest())
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			defer s.Close()
			evs, end := providertest.Drain(t, s)
			check, ok := checks[name]
			if !ok {
				t.Fatalf("no check for fixture %s", name)
			}
			check(t, providertest.Assemble(evs), end)
			providertest.Golden(t, filepath.Join("testdata", name+".events.golden"), providertest.Transcript(evs, end), *update)
		})
	}
}
