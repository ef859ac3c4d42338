package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

func TestKeepReasoning(t *testing.T) {
	yes := true
	tests := []struct {
		name string
		req  llm.Request
		want bool
	}{
		{"reasoning model", llm.Request{Model: "o4-mini", KeepReasoning: true}, true},
		{"gpt-5", llm.Request{Model: "gpt-5-mini", KeepReasoning: true}, true},
		{"effort set", llm.Request{Model: "my-deployment", KeepReasoning: true,
			Extra: []llm.Field{{Name: "reasoning_effort", Value: json.RawMessage(`"low"`)}}}, true},
		{"not a reasoning model", llm.Request{Model: "gpt-4.1-mini", KeepReasoning: true}, false},
		{"not asked", llm.Request{Model: "o4-mini"}, false},
		{"stored upstream", llm.Request{Model: "o4-mini", KeepReasoning: true, Store: &yes}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Messages = []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "hi"}}}}
			body, err := encodeResponsesRequest(keepReasoning(&tt.req))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(body), `"include":["reasoning.encrypted_content"]`); got != tt.want {
				t.Errorf("got include %v in %s, want %v", got, body, tt.want)
			}
			if len(tt.req.Include) != 0 {
				t.Errorf("the caller's request was changed: %v", tt.req.Include)
			}
		})
	}
}
