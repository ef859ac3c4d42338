package server_test

import (
	"bufio"
	"io"
	"strings"
	"testing"
	"time"
)

// TestRunAccountedWhenClientLeaves: a client that leaves does not stop its run, and the
// account still gets every round: a run whose client left after its first frames records the
// same tokens as the same run read to its end.
func TestRunAccountedWhenClientLeaves(t *testing.T) {
	url := serveGate(t, `providers: {sim: {kind: sim}}
auth: {admin_token: `+admin+`}
runs: {max_rounds: 20}
models:
  loop: {targets: ["sim/tools?calls=1&name=tick&args={}&first=2ms"], tools: [tick]}
tools:
  tick: {sim: {steps: 2, interval: 5ms}}
`, nil, time.Hour, nil)
	stayID, stay := createKey(t, url, admin, `{"name":"stays"}`)
	leaveID, leave := createKey(t, url, admin, `{"name":"leaves"}`)

	resp := uiDo(t, t.Context(), "POST", url+"/v1/ui/chat", stay, uiBody("acct-stay", "loop", "go"))
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	_, whole := usageReport(t, url, "key="+stayID)
	if whole.Requests != 1 || whole.OutputTokens == 0 {
		t.Fatalf("the run read to its end: %+v", whole)
	}

	resp = uiDo(t, t.Context(), "POST", url+"/v1/ui/chat", leave, uiBody("acct-leave", "loop", "go"))
	br := bufio.NewReader(resp.Body)
	for n := 0; n < 3; { // the first frames, then the client leaves mid-run
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "data: ") {
			n++
		}
	}
	resp.Body.Close()
	var left usageLine
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, left = usageReport(t, url, "key="+leaveID); left.Requests > 0 {
			break
		}
	}
	if left.Requests != 1 || left.InputTokens != whole.InputTokens || left.OutputTokens != whole.OutputTokens {
		t.Errorf("the run whose client left was accounted %+v, want every round: %+v", left, whole)
	}
}
