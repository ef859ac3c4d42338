package server_test

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/mockllm"
)

// cacheRecord is what TestRequestLogPromptCache reads of a record: the provider prompt
// cache's fields (issue 46).
type cacheRecord struct {
	ID                 string  `json:"id"`
	TokensIn           int     `json:"tokens_in"`
	TokensOut          int     `json:"tokens_out"`
	TokensCached       int     `json:"tokens_cached"`
	CacheReadTokens    int     `json:"cache_read_tokens"`
	CacheWriteTokens   int     `json:"cache_write_tokens"`
	CacheWrite1hTokens int     `json:"cache_write_1h_tokens"`
	SavedUSD           float64 `json:"saved_usd"`
	CostUSD            float64 `json:"cost_usd"`
	CacheDropped       int     `json:"cache_dropped"`
	Affinity           *string `json:"affinity"`
	Cache              string  `json:"cache"`
}

// A request whose upstream (Anthropic's wire, recorded bytes) reports 1,200 tokens read from
// its prompt cache and 300 written to it gets a record with those numbers, the saving priced
// from the price table, and the affinity outcome (none: one target); the list, the export
// and the log's usage report carry them too (issue 46).
func TestRequestLogPromptCache(t *testing.T) {
	ms := httptest.NewServer(mockllm.New(mockllm.Options{FixturesDir: "testdata"}))
	t.Cleanup(ms.Close)
	const target = "anth/replay?file=anthropic-cache-read-write.sse"
	url := serveGate(t, logsYAML("sqlite://"+t.TempDir()+"/logs.db",
		`  anth: {kind: anthropic, base_url: "${MOCK_URL}", api_key: sk-ant-test}
`, `  agent: ["`+target+`"]
prices:
  "`+target+`": {input: 3, output: 15, cached_input: 0.3, cache_write: 3.75}
`), map[string]string{"MOCK_URL": ms.URL}, time.Minute, nil)

	_, secret := createKey(t, url, logsAdmin, `{"name":"agent-bot"}`)
	r := do(t, "POST", url+"/v1/chat/completions", secret, chatBody("agent", false, ""))
	if r.status != http.StatusOK || !strings.Contains(string(r.body), "paid off") {
		t.Fatalf("got %d %s, want the recorded answer", r.status, r.body)
	}
	id := r.header.Get("X-Request-Id")
	waitRecord(t, url, id)
	var got cacheRecord
	if err := json.Unmarshal(do(t, "GET", url+"/admin/logs/"+id, logsAdmin, "").body, &got); err != nil {
		t.Fatal(err)
	}
	// By hand, at $3 input, $0.30 cache read, $3.75 cache write and $15 output a million:
	// saved 1200 × (3 − 0.30) − 300 × (3.75 − 3) = 3015 µUSD; cost 40 × 3 + 1200 × 0.30 +
	// 300 × 3.75 + 9 × 15 = 1740 µUSD. The prompt holds the cache's tokens (40 + 1200 + 300).
	want := cacheRecord{ID: id, TokensIn: 1540, TokensOut: 9, TokensCached: 1200, CacheReadTokens: 1200,
		CacheWriteTokens: 300, SavedUSD: 0.003015, CostUSD: 0.00174, Affinity: new(string)}
	if got.ID != want.ID || got.TokensIn != want.TokensIn || got.TokensOut != want.TokensOut ||
		got.TokensCached != want.TokensCached || got.CacheReadTokens != want.CacheReadTokens ||
		got.CacheWriteTokens != want.CacheWriteTokens || got.CacheWrite1hTokens != 0 || got.CacheDropped != 0 ||
		math.Abs(got.SavedUSD-want.SavedUSD) > 1e-12 || math.Abs(got.CostUSD-want.CostUSD) > 1e-12 ||
		got.Affinity == nil || *got.Affinity != "" {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("record\n got %s\nwant %s", g, w)
	}

	// The list and its affinity filter: "" is none of new, kept, moved.
	if recs := waitLogs(t, url, "alias=agent", 1); recs[0].ID != id {
		t.Errorf("list: got %+v", recs)
	}
	if recs := waitLogs(t, url, "alias=agent&affinity=kept", 0); len(recs) != 0 {
		t.Errorf("affinity=kept: got %+v, want none", recs)
	}
	if bad := do(t, "GET", url+"/admin/logs?affinity=sticky", logsAdmin, ""); bad.status != http.StatusBadRequest ||
		!strings.Contains(string(bad.body), "affinity") {
		t.Errorf("affinity=sticky: got %d %s, want a 400 naming affinity", bad.status, bad.body)
	}

	// The CSV export's prompt-cache columns.
	rows, err := csv.NewReader(strings.NewReader(string(do(t, "GET", url+"/admin/logs/export?format=csv&alias=agent", logsAdmin, "").body))).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("CSV: %v, %d rows", err, len(rows))
	}
	col := func(name string) string { return rows[1][slices.Index(rows[0], name)] }
	if col("cache_read_tokens") != "1200" || col("cache_write_tokens") != "300" || col("saved_usd") != "0.003015" || col("affinity") != "" {
		t.Errorf("CSV: got %v / %v", rows[0], rows[1])
	}

	// The log's usage report (by bucket) sums them.
	day := time.Now().UTC().Format("2006-01-02")
	u := do(t, "GET", url+"/admin/usage?bucket=hour&group_by=alias&from="+day+"&to="+day, logsAdmin, "")
	var rep struct {
		Source string `json:"source"`
		Data   []struct {
			Group            string  `json:"group"`
			TokensIn         int64   `json:"input_tokens"`
			CacheReadTokens  int64   `json:"cache_read_tokens"`
			CacheWriteTokens int64   `json:"cache_write_tokens"`
			SavedUSD         float64 `json:"saved_usd"`
		} `json:"data"`
	}
	if err := json.Unmarshal(u.body, &rep); err != nil || u.status != http.StatusOK || rep.Source != "logs" {
		t.Fatalf("usage: %d %s (%v)", u.status, u.body, err)
	}
	var reads, writes, in int64
	var saved float64
	for _, l := range rep.Data {
		if l.Group == "agent" {
			reads, writes, in, saved = reads+l.CacheReadTokens, writes+l.CacheWriteTokens, in+l.TokensIn, saved+l.SavedUSD
		}
	}
	if reads != 1200 || writes != 300 || in != 1540 || math.Abs(saved-0.003015) > 1e-12 {
		t.Errorf("usage of agent: got reads %d, writes %d, input %d, saved %v; want 1200, 300, 1540, 0.003015 (%s)", reads, writes, in, saved, u.body)
	}
}
