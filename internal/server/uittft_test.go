package server_test

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// TestUIRunTTFT: the access line of a frontend run carries its time to first token, from the
// request's arrival to the first text frame sent to this client: here at least the mock's
// scripted wait before its first chunk.
func TestUIRunTTFT(t *testing.T) {
	var log logBuffer
	url := serveGate(t, `providers: {sim: {kind: sim}}
models:
  slowstart: ["sim/text?len=40&first=30ms"]
`, nil, time.Hour, &log)
	resp := uiDo(t, t.Context(), "POST", url+"/v1/ui/chat", "", uiBody("ttft-1", "slowstart", "hi"))
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	var ttft float64
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, line := range strings.Split(log.String(), "\n") {
			if i := strings.Index(line, "ttft_ms="); i >= 0 && strings.Contains(line, "path=/v1/ui/chat") {
				f := strings.Fields(line[i+len("ttft_ms="):])
				if len(f) > 0 {
					json.Unmarshal([]byte(f[0]), &ttft)
				}
			}
		}
		if ttft > 0 {
			break
		}
	}
	if ttft < 30 {
		t.Errorf("ttft_ms %v on the run's access line, want at least the mock's 30 ms wait", ttft)
	}
}
