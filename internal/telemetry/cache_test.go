package telemetry

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sluice-gw/sluice/internal/llm"
)

// cacheUsage is a call that read 600 prompt tokens from the provider's cache and wrote 300,
// 100 of them with the 1-hour lifetime.
var cacheUsage = llm.Usage{PromptTokens: 1000, CompletionTokens: 50, TotalTokens: 1050, CachedTokens: 600, CacheWriteTokens: 300, CacheWrite1hTokens: 100}

// serveCached runs one request served by b/y with cacheUsage through tel.
func serveCached(t *testing.T, tel *Telemetry) {
	t.Helper()
	r := httptest.NewRequest("POST", "/v1/chat/completions", nil)
	start := time.Now()
	ctx, rq := tel.Start(r.Context(), r, "/v1/chat/completions", start)
	rq.End(ctx, &Access{ID: "r1", Model: "default", Target: "b/y", Status: 200, Start: start, Duration: time.Second, Attempts: 1,
		Tries:    []llm.Attempt{{Target: "b/y", Start: start, Committed: true, FirstEvent: 100 * time.Millisecond}},
		Response: &llm.Response{Model: "y"}, Usage: UsageOf(cacheUsage)})
}

// The prompt cache's tokens (issue 46): on the request's span with the GenAI conventions'
// names, and counted by kind and lifetime with the token usage's bounded labels.
func TestCacheTokens(t *testing.T) {
	m := newMem(false)
	serveCached(t, m.tel)
	spans := m.spans.Ended()
	srv := spans[len(spans)-1]
	for k, v := range map[string]string{"gen_ai.usage.input_tokens": "1000", "gen_ai.usage.cache_read.input_tokens": "600",
		"gen_ai.usage.cache_creation.input_tokens": "300", "sluice.usage.cache_creation_1h.input_tokens": "100"} {
		if got, _ := attrOf(srv.Attributes(), k); got != v {
			t.Errorf("server span %s: got %q, want %q", k, got, v)
		}
	}
	labels := "gen_ai.operation.name=chat,gen_ai.provider.name=b,gen_ai.request.model=b/y"
	checks := []struct {
		metric string
		want   map[string]int64
	}{
		{MetricCacheReadTokens, map[string]int64{labels: 600}},
		{MetricCacheWriteTokens, map[string]int64{labels + ",sluice.cache.ttl=5m": 200, labels + ",sluice.cache.ttl=1h": 100}},
	}
	for _, c := range checks {
		got := m.sum(t, c.metric)
		if len(got) != len(c.want) {
			t.Errorf("%s: got %v, want %v", c.metric, got, c.want)
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s: got %v, want %s = %d", c.metric, got, k, v)
			}
		}
	}
}

// A Prometheus scrape shows the prompt cache's counters.
func TestCacheTokensPrometheus(t *testing.T) {
	s, err := NewSDK(context.Background(), Config{Prometheus: true, Getenv: env()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	tel := New(Options{TracerProvider: s.TracerProvider, MeterProvider: s.MeterProvider, Metrics: s.Metrics,
		Models: []string{"default", "b/y"}, Providers: map[string]string{"b": "anthropic"}})
	serveCached(t, tel)
	rec := httptest.NewRecorder()
	tel.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, name := range []string{"sluice_cache_read_tokens_total", "sluice_cache_write_tokens_total"} {
		f := fams[name]
		if f == nil {
			t.Fatalf("got no %s in the scrape", name)
		}
		for _, mt := range f.Metric {
			k := name
			for _, l := range mt.Label {
				if l.GetName() == "sluice_cache_ttl" || l.GetName() == "gen_ai_provider_name" {
					k += "," + l.GetName() + "=" + l.GetValue()
				}
			}
			got[k] += mt.GetCounter().GetValue()
		}
	}
	want := map[string]float64{"sluice_cache_read_tokens_total,gen_ai_provider_name=anthropic": 600,
		"sluice_cache_write_tokens_total,gen_ai_provider_name=anthropic,sluice_cache_ttl=5m": 200,
		"sluice_cache_write_tokens_total,gen_ai_provider_name=anthropic,sluice_cache_ttl=1h": 100}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("got %v, want %s %v", got, k, v)
		}
	}
}

// The access line carries the cache's reads and writes.
func TestLogAccessCacheTokens(t *testing.T) {
	var buf bytes.Buffer
	LogAccess(context.Background(), slog.New(slog.NewTextHandler(&buf, nil)), &Access{ID: "r1", Status: 200, Usage: UsageOf(cacheUsage)})
	for _, want := range []string{"tokens_in=1000", "tokens_cache_read=600", "tokens_cache_write=300"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("got %q, want it to contain %q", buf.String(), want)
		}
	}
	buf.Reset()
	LogAccess(context.Background(), slog.New(slog.NewTextHandler(&buf, nil)), &Access{ID: "r2", Status: 200})
	if !strings.Contains(buf.String(), "tokens_cache_read=0 tokens_cache_write=0") {
		t.Errorf("got %q, want zero cache tokens without usage", buf.String())
	}
}
