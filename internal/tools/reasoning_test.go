package tools

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/provider/anthropic"
	"github.com/sluice-gw/sluice/internal/provider/openai"
)

// The next round sends back what the provider needs to continue (DESIGN §8): Anthropic
// thinking blocks with their signatures and their text as written; Responses reasoning items
// with their encrypted content (the upstream keeps nothing: store is false).
func TestReasoningHandedBack(t *testing.T) {
	const script = "reason?think=40&len=0&name=lookup&calls=1&then=echo"
	effort := []llm.Field{{Name: "reasoning_effort", Value: json.RawMessage(`"low"`)}}
	tests := []struct {
		name  string
		p     func(hc *http.Client) fallback.Provider
		extra []llm.Field
		want  []string // in the second round's request
	}{
		{"anthropic", func(hc *http.Client) fallback.Provider {
			return anthropic.New(anthropic.Config{Name: "a", BaseURL: "http://mock.test", APIKey: "k", HTTPClient: hc})
		}, nil, []string{`"type":"thinking","thinking":"`, `"signature":"`}},
		{"responses", func(hc *http.Client) fallback.Provider {
			return openai.NewResponses(openai.Config{Name: "r", BaseURL: "http://mock.test/v1", APIKey: "k", HTTPClient: hc})
		}, effort, []string{`"type":"reasoning","id":"rs_mock_`, `"encrypted_content":"`, `"include":["reasoning.encrypted_content"]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mock := mockllm.New(mockllm.Options{})
				hits := 0
				cs := startRunOn(t, tt.p(&http.Client{Transport: mock.Transport()}), tt.extra, script, 0, &hits, false)
				if hits != 1 || !strings.HasPrefix(textOf(cs), "The tool answered: 5 rows") {
					t.Fatalf("got %d tool runs and text %q, want the loop to go round", hits, textOf(cs))
				}
				second := string(mock.LastRequest(script))
				for _, w := range tt.want {
					if !strings.Contains(second, w) {
						t.Errorf("the second round's request %s lacks %s", second, w)
					}
				}
				var first strings.Builder // the first round's reasoning, as the client saw it
				for _, c := range cs {
					if c != nil && c["type"] == "finish-step" {
						break
					}
					if c != nil && c["type"] == "reasoning-delta" {
						first.WriteString(c["delta"].(string))
					}
				}
				if tt.name == "anthropic" && !strings.Contains(second, `"thinking":`+quote(first.String())) {
					t.Errorf("the thinking handed back is not the first round's %q: %s", first.String(), second)
				}
			})
		})
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
