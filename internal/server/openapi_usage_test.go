package server_test

import (
	"net/http"
	"testing"
	"time"
)

// TestOpenAPIUsageAndGuardrails checks /admin/usage, and what budgets and guardrails answer
// (429 budget_exceeded, 400 guardrail_blocked, 422 guardrail_refused), against the document.
func TestOpenAPIUsageAndGuardrails(t *testing.T) {
	url := serveGate(t, `providers: {sim: {kind: sim}}
auth: {admin_token: adm-token}
prices: {sim/echo: {input: 1, output: 0}}
guardrails:
  terms-in:  {stage: input, kind: terms, terms: [topsecret]}
  terms-out: {stage: output, kind: terms, terms: [condor]}
models:
  default: [sim/echo]
  fast: {targets: [sim/echo], guardrails: [terms-in, terms-out]}
`, nil, time.Hour, nil)
	sc := newSpecCheck(t, &gateway{url: url})
	id, key := createKey(t, url, "adm-token", `{"name":"spec","budget":{"daily_usd":1},"guardrails":["terms-out"]}`)
	sc.call(t, "GET", "/admin/keys/"+id, "adm-token", "", 200)
	sc.call(t, "PATCH", "/admin/keys/"+id, "adm-token", `{"budget":{"monthly_usd":20},"guardrails":[]}`, 200)
	sc.call(t, "PATCH", "/admin/keys/"+id, "adm-token", `{"guardrails":["nope"]}`, 400)

	sc.call(t, "POST", "/v1/chat/completions", key, say("fast", "the topsecret plan", false, ""), 400)
	refused := sc.call(t, "POST", "/v1/chat/completions", key, say("fast", "a condor", false, ""), 422)
	if refused.resp.Header.Get("X-Sluice-Cost-Usd") != "0.000002" {
		t.Errorf("got cost %q on the refusal, want 0.000002 (2 prompt tokens at 1 USD per million)", refused.resp.Header.Get("X-Sluice-Cost-Usd"))
	}
	sc.call(t, "POST", "/v1/chat/completions", key, say("fast", "a condor", true, ""), 422)
	ok := sc.call(t, "POST", "/v1/chat/completions", key, chatBody("default", false, ""), 200)
	if ok.resp.Header.Get("X-Sluice-Cost-Usd") == "" {
		t.Errorf("got no X-Sluice-Cost-Usd on a non-streamed answer")
	}
	sc.call(t, "PATCH", "/admin/keys/"+id, "adm-token", `{"budget":{"daily_usd":0.000001}}`, 200)
	sc.call(t, "POST", "/v1/chat/completions", key, chatBody("default", false, ""), 429)
	sc.call(t, "POST", "/v1/responses", key, `{"model":"default","input":"hi"}`, 429)

	sc.call(t, "GET", "/admin/usage", "adm-token", "", 200)
	sc.call(t, "GET", "/admin/usage?group_by=target&key="+id+"&from=2026-01-01&to=2026-12-31", "adm-token", "", 200)
	sc.call(t, "GET", "/admin/usage?group_by=day", "adm-token", "", 200)
	// The spec and the server agree that this request is wrong.
	req, _ := http.NewRequest("GET", url+"/admin/usage?group_by=model", nil)
	req.Header.Set("Authorization", "Bearer adm-token")
	if x := sc.send(t, req, ""); x.resp.StatusCode != 400 || sc.validRequest(t, x) == nil {
		t.Errorf("group_by=model: got %d %s, want a 400 for a request the spec rejects", x.resp.StatusCode, x.body)
	} else {
		sc.response(t, x)
	}
	sc.call(t, "GET", "/admin/usage", "", "", 401)
}
