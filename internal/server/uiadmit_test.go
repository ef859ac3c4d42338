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
