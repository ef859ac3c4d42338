package traces

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// checkMetrics scrapes g's /metrics after traffic (one plain request, one stream, one
// fallback, one run of four tools, one tools/call through /mcp) and parses it as Prometheus does: the README's families
// are there with counts that match the traffic, and no label or sample holds any of the
// secrets or the planted text.
func checkMetrics(t *testing.T, g *gateway, secrets []string, text ...string) {
	r, err := http.Get(g.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s", r.StatusCode, r.Header.Get("Content-Type"))
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v", err)
	}
	for _, s := range append(secrets, text...) {
		if bytes.Contains(body, []byte(s)) {
			t.Errorf("/metrics holds %q", s)
		}
	}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				for _, s := range secrets {
					if strings.Contains(l.GetValue(), s) {
						t.Errorf("%s{%s=%q} holds a secret", name, l.GetName(), l.GetValue())
					}
				}
			}
		}
	}

	// value adds up the family's samples whose labels include match (name, value; "*" any
	// non-empty value): a counter's or
	// gauge's value, a histogram's count (or its sum with sum set).
	value := func(name string, sum bool, match ...string) (float64, bool) {
		f, ok := fams[name]
		if !ok {
			t.Errorf("no %s", name)
			return 0, false
		}
		total, found := 0.0, false
	next:
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(match); i += 2 {
				if v := labels[match[i]]; v != match[i+1] && (match[i+1] != "*" || v == "") {
					continue next
				}
			}
			found = true
			switch {
			case m.GetHistogram() != nil && sum:
				total += m.GetHistogram().GetSampleSum()
			case m.GetHistogram() != nil:
				total += float64(m.GetHistogram().GetSampleCount())
			case m.GetCounter() != nil:
				total += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				total += m.GetGauge().GetValue()
			}
		}
		return total, found
	}
	exactly := func(want float64, name string, match ...string) {
		t.Helper()
		if got, _ := value(name, false, match...); got != want {
			t.Errorf("%s%v = %v, want %v", name, match, got, want)
		}
	}
	atLeast := func(want float64, name string, match ...string) {
		t.Helper()
		if got, _ := value(name, false, match...); got < want {
			t.Errorf("%s%v = %v, want at least %v", name, match, got, want)
		}
	}
	fallback := "mock/text?fail=500&quote=all"

	exactly(2, "gen_ai_server_request_duration_seconds", "gen_ai_request_model", "default", "gen_ai_operation_name", "chat")
	exactly(1, "gen_ai_server_request_duration_seconds", "gen_ai_request_model", "default", "sluice_stream", "true")
	exactly(1, "gen_ai_server_request_duration_seconds", "gen_ai_request_model", "fallback")
	exactly(1, "gen_ai_server_request_duration_seconds", "gen_ai_request_model", "agent")
	atLeast(1, "gen_ai_server_time_to_first_token_seconds", "gen_ai_request_model", "default")
	exactly(1, "gen_ai_client_operation_duration_seconds", "gen_ai_request_model", fallback, "error_type", "*")
	atLeast(5, "gen_ai_client_operation_duration_seconds")
	atLeast(4, "gen_ai_client_operation_time_to_first_chunk_seconds")
	atLeast(3, "sluice_gateway_overhead_seconds")
	for _, typ := range []string{"input", "output"} {
		atLeast(3, "gen_ai_client_token_usage", "gen_ai_token_type", typ)
		if sum, _ := value("gen_ai_client_token_usage", true, "gen_ai_token_type", typ); sum <= 0 {
			t.Errorf("gen_ai_client_token_usage{%s} sums to %v tokens, want > 0", typ, sum)
		}
	}
	exactly(1, "sluice_fallbacks_total", "sluice_target", fallback)
	exactly(1, "sluice_attempts_total", "sluice_target", fallback, "sluice_committed", "false")
	atLeast(5, "sluice_attempts_total", "sluice_outcome", "none", "sluice_committed", "true")
	exactly(0, "sluice_streams_open")
	exactly(1, "sluice_tool_duration_seconds", "sluice_tool", "count_rows", "sluice_outcome", "ok")
	exactly(1, "sluice_tool_duration_seconds", "sluice_tool", "progress", "sluice_outcome", "ok")
	exactly(1, "sluice_tool_duration_seconds", "sluice_tool", "broken", "sluice_outcome", "error")
	exactly(2, "sluice_tool_duration_seconds", "sluice_tool", "docs", "sluice_outcome", "ok") // the run's, /mcp's
	exactly(1, "sluice_tool_duration_seconds", "sluice_tool", "docs", "gen_ai_tool_name", "docs__search")
	for _, name := range []string{"sluice_logs_dropped_total", "sluice_usage_dropped_total", "sluice_redis_errors_total"} {
		exactly(0, name) // nothing lost, no Redis: there, and zero
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("no %s", name)
		}
	}
}
