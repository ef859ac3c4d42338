package server_test

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestRunRoundsAreAdmitted: each later round of a frontend run takes a request from the key's
// rate limit (DESIGN §6: each round is checked). A key allowed 2 requests runs a model that
// calls a tool every round: the POST takes the first, round 2 the second, and round 3 is
// refused: the run ends with the rate-limit error, then finish.
func TestRunRoundsAreAdmitted(t *testing.T) {
	url := serveGate(t, `providers: {sim: {kind: sim}}
auth: {admin_token: adm-token}
models:
  loop: {targets: ["sim/tools?calls=1&name=tick&args={}"], tools: [tick]}
tools:
  tick: {sim: {steps: 1, interval: 1ms}}
`, nil, time.Hour, nil)
	_, key := createKey(t, url, "adm-token", `{"name":"two","rpm":2}`)
	resp := uiDo(t, t.Context(), "POST", url+"/v1/ui/chat", key, uiBody("admit-1", "loop", "go"))
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	body := string(b)
	if resp.StatusCode != 200 {
		t.Fatalf("POST: %d %s", resp.StatusCode, body)
	}
	if n := strings.Count(body, `"type":"start-step"`); n != 2 {
		t.Errorf("got %d rounds, want 2 before the limit", n)
	}
	if !strings.Contains(body, `"type":"error"`) || !strings.Contains(body, "two") || !strings.Contains(body, `"type":"finish"`) {
		t.Errorf("the run's end: %s\nwant an error naming the key's limit, then finish", tail(body))
	}
	if r := do(t, "POST", url+"/v1/chat/completions", key, chatBody("loop", false, "")); r.status != 429 {
		t.Errorf("a new request after the run: %d, want 429 (the key's 2 requests are taken)", r.status)
	}
}

func tail(s string) string {
	if len(s) > 600 {
		return s[len(s)-600:]
	}
	return s
}

// TestRunRoundsSeeTheirOwnCost: a run's later rounds find the budget spent by the run itself,
// not only by other requests. Each round of this tool loop costs about $30 (its prompt, at
// $1 a token); with a daily budget of $300 the run ends with budget_exceeded after about a
// dozen rounds, one round past the budget at most, and the day holds their cost. Checking
// other requests' spending alone let it run to the round cap (128 rounds, $44,800).
func TestRunRoundsSeeTheirOwnCost(t *testing.T) {
	const target = "sim/tools?calls=1&name=tick&args={}"
	url := serveGate(t, `providers: {sim: {kind: sim}}
auth: {admin_token: `+admin+`}
models:
  loop: {targets: ["`+target+`"], tools: [tick]}
tools:
  tick: {sim: {steps: 1, interval: 1ms}}
prices: {"`+target+`": {input: 1000000, output: 0}}
`, nil, time.Hour, nil)
	id, key := createKey(t, url, admin, `{"name":"thrifty","budget":{"daily_usd":300}}`)
	resp := uiDo(t, t.Context(), "POST", url+"/v1/ui/chat", key, uiBody("admit-2", "loop", "go"))
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	body := string(b)
	if resp.StatusCode != 200 {
		t.Fatalf("POST: %d %s", resp.StatusCode, body)
	}
	rounds := strings.Count(body, `"type":"start-step"`)
	if rounds < 2 || rounds > 20 {
		t.Errorf("got %d rounds, want the few the budget pays for", rounds)
	}
	if !strings.Contains(body, `"type":"error"`) || !strings.Contains(body, "thrifty") || !strings.Contains(body, `"type":"finish"`) {
		t.Errorf("the run's end: %s\nwant an error naming the key's budget, then finish", tail(body))
	}
	// The run's reservations are settled with its real cost: the day holds what it cost.
	lines, _ := usageReport(t, url, "key="+id)
	var cost float64
	for _, l := range lines {
		cost += l.CostUSD
	}
	if cost < 250 || cost > 400 {
		t.Errorf("the key's usage says $%.2f, want the run's cost, about the budget", cost)
	}
	if r := do(t, "POST", url+"/v1/chat/completions", key, chatBody("loop", false, "")); r.status != 429 {
		t.Errorf("a new request after the run: %d, want 429 budget_exceeded", r.status)
	}
}
