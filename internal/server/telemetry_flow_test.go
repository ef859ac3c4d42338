package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
	"github.com/sluice-gw/sluice/internal/server"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// Secrets the flow plants: none may reach a log line.
const (
	providerKey  = "sk-proj-providerKEY0123456789abcdefABCDEF"
	adminToken   = "admin-token-Zq8xW2vK9mN4"
	plantedAWS   = "AKIAIOSFODNN7EXAMPLE"
	plantedToken = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
)

// observedFlow serves a gateway with keys, an admin token, a provider key, content capture
// on, and Prometheus from a real SDK, in front of the mock over loopback; its log is log.
func observedFlow(t *testing.T, log *logBuffer, extra string, vars map[string]string) (url, key string, srv *server.Server) {
	t.Helper()
	mock := httptest.NewServer(mockllm.New(mockllm.Options{}))
	t.Cleanup(mock.Close)
	key = auth.NewSecret()
	yaml := `
providers:
  mock: {kind: openai-compatible, base_url: "${MOCK_URL}/v1", api_key: "${PROVIDER_KEY}"}
models:
  default: [mock/echo]
  flaky: ["mock/text?fail=503", mock/echo]
auth: {admin_token: "${ADMIN_TOKEN}"}
telemetry: {capture_content: true}
keys:
  - {name: team-a, hash: ` + auth.Hash(key) + `, models: ["*"]}
` + extra
	v := map[string]string{"MOCK_URL": mock.URL, "PROVIDER_KEY": providerKey, "ADMIN_TOKEN": adminToken}
	for k, val := range vars {
		v[k] = val
	}
	srv = buildConfig(t, yaml, v, log)
	sdk, err := telemetry.NewSDK(context.Background(), telemetry.Config{Prometheus: true, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sdk.Shutdown(context.Background()) })
	server.SetTelemetry(srv, sdk.TracerProvider, sdk.MeterProvider, sdk.Metrics)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
	})
	return hs.URL, key, srv
}

// requests sends a few of every kind: streamed and not, a fallback, a planted secret the
// answer echoes (and redaction masks), a refused key, a traceparent.
func requests(t *testing.T, url, key string) {
	t.Helper()
	secret := `,"messages":[{"role":"user","content":"keys: ` + plantedAWS + ` and ` + plantedToken + `"}]`
	for i := 0; i < 3; i++ {
		for _, body := range []string{chatBody("default", true, ""), chatBody("default", false, ""),
			chatBody("flaky", true, ""), strings.Replace(chatBody("default", true, ""), `,"messages":[{"role":"user","content":"Hello there, gateway."}]`, secret, 1)} {
			r := do(t, "POST", url+"/v1/chat/completions", key, body)
			if r.status != 200 {
				t.Fatalf("got %d %s, want 200", r.status, r.body)
			}
		}
	}
	// 401, or 503 when Redis, which holds the keys, is down.
	if r := do(t, "POST", url+"/v1/chat/completions", "sk-sluice-wrong", chatBody("default", false, "")); r.status != 401 && r.status != 503 {
		t.Fatalf("got %d with a wrong key, want 401", r.status)
	}
}

// /metrics parses with the Prometheus text parser and holds the families of issue 10 after
// a few requests; histogram buckets run from 10 ms to minutes.
func TestMetricsEndpoint(t *testing.T) {
	rs := redistest.Start(t)
	var log logBuffer
	url, key, srv := observedFlow(t, &log, `redis: {url: "${REDIS_URL}", timeout: 5s}`, map[string]string{"REDIS_URL": rs.URL})
	requests(t, url, key)
	// A Redis error without a dead server (go-redis would redial it in the background): the
	// statistics index of the wrong type.
	if _, err := rs.Do("SET", "sluice:{stats}:replicas", "not a sorted set"); err != nil {
		t.Fatal(err)
	}
	server.PublishStats(srv)
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	for _, name := range []string{
		"gen_ai_server_request_duration_seconds", "gen_ai_server_time_to_first_token_seconds",
		"gen_ai_client_operation_duration_seconds", "gen_ai_client_operation_time_to_first_chunk_seconds",
		"gen_ai_client_token_usage", "sluice_gateway_overhead_seconds", "sluice_attempts_total",
		"sluice_fallbacks_total", "sluice_cooldowns_total", "sluice_redactions_total", "sluice_streams_open",
		"sluice_redis_errors_total", "go_goroutines",
	} {
		if fams[name] == nil {
			t.Errorf("/metrics has no family %s", name)
		}
	}
	if f := fams["gen_ai_server_time_to_first_token_seconds"]; f != nil {
		b := f.Metric[0].GetHistogram().Bucket
		if b[0].GetUpperBound() != 0.01 || b[len(b)-1].GetUpperBound() < 300 {
			t.Errorf("got buckets from %v to %v, want 10 ms to minutes", b[0].GetUpperBound(), b[len(b)-1].GetUpperBound())
		}
	}
	for name, f := range fams {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if strings.Contains(l.GetValue(), "team-a") || len(l.GetValue()) > 64 {
					t.Errorf("%s: label %s=%q, want bounded labels (no key, no id)", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
	if f := fams["sluice_redactions_total"]; f != nil && f.Metric[0].Label[0].GetValue() == "" {
		t.Errorf("got a redaction without its detector")
	}
}

// No log line of the flow holds the provider's key, a virtual key, the admin token or a
// secret the prompt planted, although spans capture content.
func TestLogsHoldNoSecret(t *testing.T) {
	var log logBuffer
	url, key, _ := observedFlow(t, &log, "", nil)
	requests(t, url, key)
	if r := do(t, "GET", url+"/admin/stats", adminToken, ""); r.status != 200 {
		t.Fatalf("GET /admin/stats: got %d %s", r.status, r.body)
	}
	if r := do(t, "GET", url+"/admin/stats", key, ""); r.status != 401 {
		t.Fatalf("GET /admin/stats with a virtual key: got %d, want 401", r.status)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) < 12 {
		t.Fatalf("got %d log lines, want one per request", len(lines))
	}
	for _, l := range lines {
		for _, s := range []string{providerKey, key, adminToken, plantedAWS, plantedToken, "sk-sluice-wrong"} {
			if strings.Contains(l, s) {
				t.Errorf("log line %q holds a secret", l)
			}
		}
	}
	if !strings.Contains(log.String(), "key_name=team-a") || !strings.Contains(log.String(), "trace_id=") {
		t.Errorf("got log %q, want key names and trace ids", log.String())
	}
}

// /admin/stats answers per alias and target; with Redis, any replica answers for the fleet.
func TestAdminStatsFleet(t *testing.T) {
	rs := redistest.Start(t)
	vars := map[string]string{"REDIS_URL": rs.URL}
	var log logBuffer
	a, key, srvA := observedFlow(t, &log, `redis: {url: "${REDIS_URL}", timeout: 5s}`, vars)
	b, _, _ := observedFlow(t, &log, `redis: {url: "${REDIS_URL}", timeout: 5s}`, vars)
	requests(t, a, key)
	server.PublishStats(srvA)
	for _, u := range []string{a, b} {
		r := do(t, "GET", u+"/admin/stats?minutes=5", adminToken, "")
		var rep telemetry.Report
		if r.status != 200 || json.Unmarshal(r.body, &rep) != nil {
			t.Fatalf("got %d %s", r.status, r.body)
		}
		rows := map[string]telemetry.Row{}
		for _, row := range rep.Data {
			rows[row.Alias+" "+row.Target] = row
		}
		d, f := rows["default mock/echo"], rows["flaky mock/echo"]
		if rep.Minutes != 5 || d.Requests != 9 || f.Requests != 3 || f.Fallbacks != 3 || d.Errors != 0 {
			t.Errorf("%s: got %+v, want 9 default and 3 flaky requests, 3 fallbacks", u, rep)
		}
		if d.TTFT.Count != 6 || d.Duration.Count != 9 || d.Duration.P50 <= 0 || d.Duration.P50 > d.Duration.P99 {
			t.Errorf("%s: got default %+v, want 6 streams' TTFT and 9 durations, ordered quantiles", u, d)
		}
	}
	if r := do(t, "GET", b+"/admin/stats?minutes=0", adminToken, ""); r.status != 400 {
		t.Errorf("minutes=0: got %d, want 400", r.status)
	}

}
