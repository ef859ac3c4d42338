package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/server"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// What the cache did is in the metrics (requests by alias and result, bytes stored, tokens
// saved) and in the access log line (cache=hit).
func TestCacheMetricsAndLog(t *testing.T) {
	ms := httptest.NewServer(mockllm.New(mockllm.Options{}))
	t.Cleanup(ms.Close)
	var log logBuffer
	// The LRU holds one of these answers (about 1.5 KB each), not two.
	srv := buildConfig(t, cacheConfig+"cache: {memory_bytes: 2KiB}\n", map[string]string{"MOCK_URL": ms.URL}, &log)
	sdk, err := telemetry.NewSDK(context.Background(), telemetry.Config{Prometheus: true, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sdk.Shutdown(context.Background()) })
	server.SetTelemetry(srv, sdk.TracerProvider, sdk.MeterProvider, sdk.Metrics)
	hs := listen(srv)
	t.Cleanup(hs.Close)

	body := `{"model":"random","messages":[{"role":"user","content":"Metrics."}]}`
	var usage string
	// A miss, two hits, a bypass; then another answer evicts the first, which is a miss again
	// and evicts it in turn.
	for _, extra := range []string{"", "", "", `,"temperature":1`, `,"seed":7`, ""} {
		r := cachePost(t, hs.URL, "/v1/chat/completions", strings.Replace(body, "}]}", "}]"+extra+"}", 1))
		if r.status != 200 {
			t.Fatalf("got %d %s", r.status, r.body)
		}
		if usage == "" {
			usage = r.body[strings.Index(r.body, `"total_tokens":`):]
		}
	}
	resp, err := http.Get(hs.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	if f := fams["sluice_cache_requests_total"]; f != nil {
		for _, m := range f.Metric {
			var alias, result string
			for _, l := range m.Label {
				switch l.GetName() {
				case "gen_ai_request_model":
					alias = l.GetValue()
				case "sluice_cache":
					result = l.GetValue()
				}
			}
			got[alias+"/"+result] = m.GetCounter().GetValue()
		}
	}
	if got["random/miss"] != 3 || got["random/hit"] != 2 || got["random/bypass"] != 1 {
		t.Errorf("got sluice_cache_requests_total %v, want random: 3 misses, 2 hits, 1 bypass", got)
	}
	if f := fams["sluice_cache_evictions_total"]; f == nil || f.Metric[0].GetCounter().GetValue() != 2 {
		t.Errorf("got sluice_cache_evictions_total %v, want 2 (cache.memory_bytes holds one answer)", f)
	}
	if f := fams["sluice_cache_stored_bytes_total"]; f == nil || f.Metric[0].GetCounter().GetValue() <= 0 {
		t.Errorf("got no bytes stored in sluice_cache_stored_bytes_total (%v)", f)
	}
	var total int
	if _, err := fmt.Sscanf(usage, `"total_tokens":%d`, &total); err != nil || total <= 0 {
		t.Fatalf("no total_tokens in the answer (%q)", usage)
	}
	if f := fams["sluice_cache_saved_total"]; f == nil || f.Metric[0].GetCounter().GetValue() != float64(2*total) {
		t.Errorf("got sluice_cache_saved_total %v, want %d (two hits of %d tokens)", f, 2*total, total)
	}
	if n := strings.Count(log.String(), "cache=hit"); n != 2 {
		t.Errorf("got %d access lines with cache=hit, want 2:\n%s", n, log.String())
	}
}
