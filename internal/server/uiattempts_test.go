package server_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"testing"
	"time"
)

var attemptsField = regexp.MustCompile(` attempts=(\d+) `)

// TestRunAttemptsAgree: "attempts" counts the targets tried for the request, the same in
// X-Sluice-Attempts, the UI stream's message-metadata (each round's and finish's) and the
// access line; the metadata's calls counts every upstream call, later tool rounds included.
// A restart after the first commit is counted by the metadata and the access line; the
// headers say the first commit's (runs.Run.Headed), whenever the reader sends them.
func TestRunAttemptsAgree(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		alias                   string
		header, attempts, calls int
	}{
		// One failed target, then three rounds on the second: 2 attempts, 4 calls.
		{"fallback then rounds", `{targets: ["sim/text?fail=500", "sim/tools?calls=1&name=tick&args={}"], tools: [tick]}`, 2, 2, 4},
		{"one target, rounds", `{targets: ["sim/tools?calls=1&name=tick&args={}"], tools: [tick]}`, 1, 1, 3},
		{"restart", `{targets: ["sim/text?len=80&fail=cut&after=3", "sim/echo"], on_midstream_failure: restart}`, 1, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := newAccessLog()
			url := serveGate(t, `providers: {sim: {kind: sim}}
runs: {max_rounds: 3}
models:
  a: `+tc.alias+`
tools:
  tick: {sim: {steps: 1, interval: 1ms}}
`, nil, time.Hour, log)
			resp := uiDo(t, t.Context(), "POST", url+"/v1/ui/chat", "", uiBody("attempts", "a", "go"))
			defer resp.Body.Close()
			if got := resp.Header.Get("X-Sluice-Attempts"); got != strconv.Itoa(tc.header) {
				t.Errorf("got X-Sluice-Attempts %q, want %d", got, tc.header)
			}
			var metas []map[string]any
			for _, f := range sseFrames(t, resp.Body, -1) {
				var c struct {
					Type string         `json:"type"`
					Meta map[string]any `json:"messageMetadata"`
				}
				if json.Unmarshal([]byte(frameData(f)), &c) == nil && c.Meta != nil && c.Meta["attempts"] != nil {
					metas = append(metas, c.Meta)
				}
			}
			if len(metas) < 2 {
				t.Fatalf("got metadata %v, want each round's and finish's", metas)
			}
			last := metas[len(metas)-1]
			if last["attempts"] != float64(tc.attempts) || last["calls"] != float64(tc.calls) {
				t.Errorf("got finish metadata attempts %v, calls %v; want %d and %d", last["attempts"], last["calls"], tc.attempts, tc.calls)
			}
			for _, m := range metas {
				if m["attempts"] != float64(tc.attempts) {
					t.Errorf("got metadata %v, want %d attempts in every round", m, tc.attempts)
				}
			}
			line := log.line(t, resp.Header.Get("X-Request-Id"))
			if m := attemptsField.FindStringSubmatch(line); m == nil || m[1] != strconv.Itoa(tc.attempts) {
				t.Errorf("got access line %s, want attempts=%d", line, tc.attempts)
			}
		})
	}
}
