package vertex

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	dialect "github.com/sluice-gw/sluice/internal/dialect/anthropic"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// claudeBody sends req to Vertex's Claude and returns the rawPredict body it got, decoded,
// and the usage of the answer.
func claudeBody(t *testing.T, req *llm.Request) (map[string]any, llm.Usage) {
	t.Helper()
	u := upstream(t)
	req.Model = "claude-sonnet-4-5@20250929"
	s, err := client(u, static).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, end := providertest.Drain(t, s)
	if end != io.EOF {
		t.Fatalf("end: got %v, want io.EOF", end)
	}
	raw, _, _ := u.Last()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m, providertest.Assemble(evs).Usage
}

func marked(role llm.Role, s, ttl string) llm.Message {
	return llm.Message{Role: role, Parts: []llm.Part{{Type: llm.PartText, Text: s, Cache: &llm.Cache{TTL: ttl}}}}
}

// Claude on Vertex gets the breakpoints the Anthropic API gets: on the blocks they were on,
// with their ttl, the last four of five (the usage counts the one left out); a Messages
// client's own body goes with its markers as they came.
func TestClaudeCache(t *testing.T) {
	tests := []struct {
		name    string
		req     llm.Request
		want    []string
		dropped int
	}{
		{"ttl kept", llm.Request{Tools: []llm.Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`), Cache: &llm.Cache{TTL: "1h"}}},
			Messages: []llm.Message{marked(llm.RoleSystem, "s", "1h"), marked(llm.RoleUser, "q", "5m")}},
			[]string{"tools.0=1h", "system.0=1h", "messages.0.content.0=5m"}, 0},
		{"five keep the last four", llm.Request{Messages: []llm.Message{marked(llm.RoleSystem, "s", ""),
			marked(llm.RoleUser, "a", ""), marked(llm.RoleAssistant, "b", ""), marked(llm.RoleUser, "c", ""), marked(llm.RoleAssistant, "d", ""), marked(llm.RoleUser, "e", "")}},
			[]string{"messages.1.content.0=-", "messages.2.content.0=-", "messages.3.content.0=-", "messages.4.content.0=-"}, 2},
		{"native", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "q"}}}},
			Native: &llm.Native{Wire: "anthropic", Body: json.RawMessage(`{"model":"m","max_tokens":9,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral","ttl":"1h"}}],"messages":[{"role":"user","content":[{"type":"text","text":"q","cache_control":{"type":"ephemeral"}}]}]}`)}},
			[]string{"system.0=1h", "messages.0.content.0=-"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, usage := claudeBody(t, &tt.req)
			if usage.CacheDropped != tt.dropped {
				t.Errorf("got CacheDropped %d, want %d", usage.CacheDropped, tt.dropped)
			}
			if got := providertest.CacheSites(body); strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("got cache_control at %v, want %v", got, tt.want)
			}
			if _, ok := body["model"]; ok {
				t.Error("the model went in the body")
			}
		})
	}
}

// The recorded Claude Code request reaches Claude on Vertex with its three markers, natively
// and translated.
func TestClaudeCodeCache(t *testing.T) {
	b, err := os.ReadFile("../../dialect/anthropic/testdata/claude-code-2.1.328.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, native := range []bool{true, false} {
		r, err := dialect.Decode(b, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"system.1=-", "system.2=-", "system.3=-"}
		if native {
			want = []string{"system.1=-", "system.2=-", "messages.1.content.0=-"}
		} else {
			r.Req.Native = nil
		}
		body, _ := claudeBody(t, &r.Req)
		if got := providertest.CacheSites(body); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("native %v: got cache_control at %v, want %v", native, got, want)
		}
	}
}
