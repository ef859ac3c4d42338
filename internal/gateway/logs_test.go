package gateway

import (
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/logstore"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// The record of a request keeps its provider prompt cache's figures and what conversation
// affinity did (issue 46); an answer from the gateway's response cache called no provider:
// no affinity, whatever the stored response said.
func TestRecordPromptCache(t *testing.T) {
	u := llm.Usage{PromptTokens: 1540, CompletionTokens: 9, CachedTokens: 1200, CacheWriteTokens: 300,
		CacheWrite1hTokens: 100, CacheDropped: 2}
	tests := []struct {
		name  string
		in    telemetry.Access
		check func(r logstore.Record) bool
	}{
		{"served, affinity kept", telemetry.Access{Usage: telemetry.UsageOf(u), SavedUSD: 0.003015,
			Response: &llm.Response{Usage: u, Affinity: "kept"}},
			func(r logstore.Record) bool {
				return r.CacheReadTokens == 1200 && r.TokensCached == 1200 && r.CacheWriteTokens == 300 &&
					r.CacheWrite1hTokens == 100 && r.CacheDropped == 2 && r.SavedUSD == 0.003015 && r.Affinity == "kept"
			}},
		{"moved", telemetry.Access{Usage: telemetry.UsageOf(u), Response: &llm.Response{Affinity: "moved"}},
			func(r logstore.Record) bool { return r.Affinity == "moved" }},
		{"response cache hit", telemetry.Access{Usage: &telemetry.Usage{}, Cache: "hit",
			Response: &llm.Response{Usage: u, Affinity: "kept"}},
			func(r logstore.Record) bool { return r.Affinity == "" && r.CacheReadTokens == 0 && r.SavedUSD == 0 }},
		{"no answer", telemetry.Access{}, func(r logstore.Record) bool { return r.Affinity == "" && r.CacheWriteTokens == 0 }},
	}
	l := &requestLog{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.ID, tc.in.Start = "req_1", time.Now()
			if r := l.build(&tc.in); !tc.check(r) {
				t.Errorf("got %+v", r)
			}
		})
	}
}
