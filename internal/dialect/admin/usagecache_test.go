package admin

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/usage"
)

// A line of GET /admin/usage has the prompt cache's counters, a negative saving included
// (writes not read back yet), in USD (issue 46).
func TestReportCacheCounters(t *testing.T) {
	day := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	c := usage.Counts{Requests: 2, InputTokens: 10_000, CachedTokens: 6_000, CacheWriteTokens: 3_000, CacheWrite1hTokens: 1_000,
		CostNano: 25_800_000, SavedNano: -1_500_000}
	b, err := json.Marshal(Report(usage.Query{From: day, To: day, GroupBy: usage.ByAlias}, []usage.Line{{Name: "claude", Counts: c}}, c))
	if err != nil {
		t.Fatal(err)
	}
	want := `"alias":"claude","requests":2,"errors":0,"input_tokens":10000,"output_tokens":0,"cache_read_tokens":6000,` +
		`"cache_write_tokens":3000,"cost_usd":0.0258,"saved_usd":-0.0015,"cache_hits":0,"p95_first_token_ms":null,` +
		`"fallbacks":0,"estimated":0,"saved_tokens":0,"cache_write_1h_tokens":1000}`
	if !strings.Contains(string(b), want) || !strings.Contains(string(b), `"total":{"requests":2,`) {
		t.Errorf("got %s, want a line %s", b, want)
	}
}
