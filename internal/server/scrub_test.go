package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/server"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// The credentials the scrub flow configures; the mock quotes them back in its errors.
var scrubCreds = map[string]string{
	"OAI_KEY":    "sk-proj-Qm7ZrT2xWv9LpK4nB8cD1eF6gH3jS5aU",
	"COMPAT_KEY": "cmpt-7Hq2Lx9Vz4Rk8Ww3Ny6Tb1Mp5Ga0",
	"HDR":        "hdr-Zk4Xq8Lm2Vr7Tn5Wp9Yb3Cd6Fe1",
	"QKEY":       "qk+Jv6/Rn3=Xz8Lq2Wm7Tk5Pb9",
	"ANT_KEY":    "sk-ant-api03-Fq9Lw2Xr7Zm4Vn8Tk3Yp6Bc1Dh5Jg-AA",
	"RESP_KEY":   "rsp-Ux3Wq8Zn2Lr7Vk5Tm9Yp4Bc1Qe6",
}

// scrubTitle is sent in X-Title, whose values are public, so not a configured credential; it
// has the shape of an AWS access key id, so the redaction detectors mask it where an upstream
// quotes it.
const scrubTitle = "AKIAIOSFODNN7EXAMPLE"

// scrubFaults are the mock's faults whose error text quotes the request: HTTP errors passed on
// (400) or fallen back from (429, 500), in-stream errors before and after text (Chat data
// and event: error frames, Anthropic error events, Responses error + response.failed, and
// response.failed alone).
var scrubFaults = []string{"text?fail=400", "text?fail=429", "text?fail=500", "text?fail=error",
	"text?len=40&chunk=8&fail=error&after=3", "text?fail=event", "text?len=40&chunk=8&fail=event&after=3"}

var embedFaults = []string{"embed?fail=400", "embed?fail=429", "embed?fail=500", "embed?fail=error"}

// scrubFlow serves a gateway with an OpenAI, an OpenAI-compatible (custom header and query
// credential), an Anthropic and a Responses provider in front of the mock, one alias per
// provider, fault and quoting, and one per fault and quoting chaining all four (its
// all_targets_failed lists every attempt). Spans go to spans, the log to log.
func scrubFlow(t *testing.T, log *logBuffer, spans *tracetest.SpanRecorder) (url, key string, chat, embed []string) {
	t.Helper()
	ms := httptest.NewServer(mockllm.New(mockllm.Options{}))
	t.Cleanup(ms.Close)
	mock := ms.URL
	key = auth.NewSecret()
	var models, embeddings strings.Builder
	chat = faultAliases(&models, "", scrubFaults, []string{"oai", "compat", "claude", "resp"}, "  %s: [%s]\n")
	embed = faultAliases(&embeddings, "emb-", embedFaults, []string{"oai", "compat", "resp"}, "  %s: {targets: [%s]}\n")
	yaml := `
providers:
  oai: {kind: openai, base_url: "${MOCK_URL}/v1", api_key: "${OAI_KEY}"}
  compat: {kind: openai-compatible, base_url: "${MOCK_URL}/v1", api_key: "${COMPAT_KEY}",
           headers: {X-Gateway-Secret: "${HDR}", X-Title: "${TITLE}"}, query: {key: "${QKEY}", api-version: "2025-04-01-preview"}}
  claude: {kind: anthropic, base_url: "${MOCK_URL}", api_key: "${ANT_KEY}"}
  resp: {kind: openai, api: responses, base_url: "${MOCK_URL}/v1", api_key: "${RESP_KEY}"}
auth: {admin_token: "${ADMIN_TOKEN}"}
keys:
  - {name: team-a, hash: ` + auth.Hash(key) + `, models: ["*"]}
models:
` + models.String() + "embeddings:\n" + embeddings.String()
	vars := map[string]string{"MOCK_URL": mock, "ADMIN_TOKEN": adminToken, "TITLE": scrubTitle}
	for k, v := range scrubCreds {
		vars[k] = v
	}
	srv := buildConfig(t, yaml, vars, log)
	sdk, err := telemetry.NewSDK(context.Background(), telemetry.Config{Prometheus: true, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sdk.Shutdown(context.Background()) })
	server.SetTelemetry(srv, sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)), sdk.MeterProvider, sdk.Metrics)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
	})
	return hs.URL, key, chat, embed
}

// faultAliases writes with line, for each quoting mode and fault, one alias per provider and
// one chaining them all (with targets of its own, seed=2, so that their cooldowns are their
// own), and returns the aliases' names.
func faultAliases(b *strings.Builder, prefix string, faults, providers []string, line string) []string {
	var names []string
	for _, mode := range []string{"all", "masked"} {
		for i, f := range faults {
			var chain []string
			for _, p := range providers {
				target := p + "/" + f + "&quote=" + mode
				names = append(names, fmt.Sprintf("%s%s-%d-%s", prefix, p, i, mode))
				fmt.Fprintf(b, line, names[len(names)-1], fmt.Sprintf("%q", target))
				chain = append(chain, fmt.Sprintf("%q", target+"&seed=2"))
			}
			names = append(names, fmt.Sprintf("%schain-%d-%s", prefix, i, mode))
			fmt.Fprintf(b, line, names[len(names)-1], strings.Join(chain, ", "))
		}
	}
	return names
}

// No byte sequence of a configured credential (8 consecutive bytes of it, as configured or
// URL-escaped) reaches a client, a log line, a span or /metrics, whatever the endpoint, the
// provider's wire, the fault, and whether the upstream quotes the key whole or in part; and
// what the upstream said is still there, masked.
func TestUpstreamErrorsHoldNoCredential(t *testing.T) {
	var log logBuffer
	spans := tracetest.NewSpanRecorder()
	url, key, chat, embed := scrubFlow(t, &log, spans)
	var seen strings.Builder
	masked := 0
	check := func(what string, r reply) {
		t.Helper()
		for h, vs := range r.header {
			fmt.Fprintf(&seen, "%s: %s\n", h, strings.Join(vs, ", "))
		}
		seen.Write(r.body)
		seen.WriteByte('\n')
		if leak := credentialIn(string(r.body)); leak != "" {
			t.Errorf("%s: the answer holds %q: %s", what, leak, r.body)
		}
		masked += strings.Count(string(r.body), "[REDACTED:credential]")
	}
	for i, alias := range chat {
		for _, stream := range []bool{false, true} {
			check(fmt.Sprintf("chat %s stream=%v", alias, stream),
				do(t, "POST", url+"/v1/chat/completions", key, chatBody(alias, stream, "")))
			check(fmt.Sprintf("responses %s stream=%v", alias, stream),
				do(t, "POST", url+"/v1/responses", key, respBody(alias, stream, "")))
		}
		check("ui "+alias, do(t, "POST", url+"/v1/ui/chat", key, uiBody(fmt.Sprintf("chat-%d", i), alias, "Hello.")))
	}
	for _, alias := range embed {
		check("embeddings "+alias, do(t, "POST", url+"/v1/embeddings", key, `{"model":"`+alias+`","input":"Hello."}`))
	}
	if masked < len(chat) {
		t.Errorf("got %d masks in all the answers, want the upstreams' quotes there, masked", masked)
	}
	if !strings.Contains(seen.String(), "X-Title: [REDACTED:aws_access_key]") {
		t.Errorf("got no quoted X-Title masked by the aws_access_key detector, want the detectors run over error text")
	}
	for _, code := range []string{"all_targets_failed", "all_targets_cooling_down"} {
		if !strings.Contains(seen.String(), `"code":"`+code+`"`) {
			t.Errorf("got no %s answer, want the attempts' reasons listed (scrubbed)", code)
		}
	}
	for _, path := range []string{"/admin/stats", "/admin/usage", "/admin/keys"} {
		r := do(t, "GET", url+path, adminToken, "")
		if r.status != http.StatusOK {
			t.Errorf("GET %s: got %d %s", path, r.status, r.body)
		}
		check("GET "+path, r)
	}
	r := do(t, "GET", url+"/metrics", "", "")
	if r.status != http.StatusOK || !strings.Contains(string(r.body), "sluice_attempts_total") {
		t.Fatalf("GET /metrics: got %d, want the attempts counted", r.status)
	}
	check("/metrics", r)
	if leak := credentialIn(log.String()); leak != "" {
		t.Errorf("the log holds %q", leak)
	}
	var sp strings.Builder
	for _, s := range spans.Ended() {
		fmt.Fprintf(&sp, "%s %v %v\n", s.Name(), s.Status(), s.Attributes())
		for _, e := range s.Events() {
			fmt.Fprintf(&sp, "  %s %v\n", e.Name, e.Attributes)
		}
	}
	if !strings.Contains(sp.String(), "sluice.reason") {
		t.Errorf("got no attempt span with a reason, want the failures recorded")
	}
	if leak := credentialIn(sp.String()); leak != "" {
		t.Errorf("a span holds %q", leak)
	}
	if t.Failed() {
		t.Logf("the answers:\n%s", seen.String())
	}
}

// credentialIn returns the first run of 8 bytes of a configured credential (as configured
// or URL-escaped) that s holds, or scrubTitle if s holds it; "" when there is none.
func credentialIn(s string) string {
	if strings.Contains(s, scrubTitle) {
		return scrubTitle
	}
	for _, c := range scrubCreds {
		if run := runOf(s, c); run != "" {
			return run
		}
	}
	return ""
}

// runOf returns the first run of 8 bytes of secret (as it is or URL-escaped) that s holds;
// "" when there is none.
func runOf(s, secret string) string {
	for _, f := range []string{secret, url.QueryEscape(secret)} {
		for i := 0; i+8 <= len(f); i++ {
			if strings.Contains(s, f[i:i+8]) {
				return f[i : i+8]
			}
		}
	}
	return ""
}
