package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// TestUIRunCost: a frontend run's round and finish metadata carry the cost (costUsd) when the
// target has a price, and leave it out when it has none (0 would say the answer was free).
func TestUIRunCost(t *testing.T) {
	tests := []struct {
		name   string
		prices string
		priced bool
	}{
		{"priced", "prices: {mock/echo: {input: 1000, output: 2000}}\n", true},
		{"no price", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGateway(t, baseConfig+tt.prices)
			resp := uiDo(t, context.Background(), "POST", g.url+"/v1/ui/chat", "", uiBody("cost-"+strings.ReplaceAll(tt.name, " ", "-"), "default", "Hello there, gateway."))
			defer resp.Body.Close()
			var round, finish map[string]any
			for _, f := range sseFrames(t, resp.Body, -1) {
				var c struct {
					Type string         `json:"type"`
					Meta map[string]any `json:"messageMetadata"`
				}
				if json.Unmarshal([]byte(frameData(f)), &c) != nil {
					continue
				}
				switch c.Type {
				case "message-metadata":
					round = c.Meta
				case "finish":
					finish = c.Meta
				}
			}
			if round == nil || finish == nil {
				t.Fatalf("got round %v finish %v, want both", round, finish)
			}
			for name, m := range map[string]map[string]any{"round": round, "finish": finish} {
				cost, ok := m["costUsd"].(float64)
				if ok != tt.priced {
					t.Fatalf("%s: got costUsd %v (present %v), want present %v", name, m["costUsd"], ok, tt.priced)
				}
				if !tt.priced {
					continue
				}
				u := m["usage"].(map[string]any)
				want := usage.USD(usage.Cost(usage.Price{Input: 1000, Output: 2000},
					llm.Usage{PromptTokens: int(u["inputTokens"].(float64)), CompletionTokens: int(u["outputTokens"].(float64))}))
				if cost != want || cost <= 0 {
					t.Errorf("%s: got costUsd %v, want %v", name, cost, want)
				}
			}
		})
	}
}
