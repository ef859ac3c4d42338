package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/mockllm"
)

// upstream: plain (issue 36): a non-streamed request is one non-streamed upstream call; the
// chain still falls back on a status error, an error object in a 200 and headers later than
// first_event; a slow body after its headers is bounded by total only; streamed requests and
// a target that says upstream: stream still stream.
func TestUpstreamPlain(t *testing.T) {
	mock := mockllm.New(mockllm.Options{})
	ms := httptest.NewServer(mock)
	defer ms.Close()
	// slow sends its headers at once and its body after 400 ms, beyond first_event.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		time.Sleep(400 * time.Millisecond)
		io.WriteString(w, `{"id":"chatcmpl-slow","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"slow but whole"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`)
	}))
	defer slow.Close()
	yaml := `
providers:
  mock: {kind: openai-compatible, base_url: "${MOCK_URL}/v1"}
  slow: {kind: openai-compatible, base_url: "${SLOW_URL}/v1"}
models:
  plain:
    upstream: plain
    timeouts: {first_event: 200ms}
    targets: ["mock/text?len=10&fail=error", "mock/text?len=10&wait=600ms", "mock/text?len=60&chunk=5"]
  slowbody:
    upstream: plain
    timeouts: {first_event: 200ms}
    targets: [slow/m]
  mixed:
    upstream: plain
    targets: [{target: "mock/text?len=20&seed=7", upstream: stream}]
`
	gs := serveConfig(t, yaml, map[string]string{"MOCK_URL": ms.URL, "SLOW_URL": slow.URL})
	defer gs.Close()

	sent := func(model string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(mock.LastRequest(model), &m); err != nil {
			t.Fatalf("%s: no request reached the mock: %v", model, err)
		}
		return m
	}
	answer := func(model string, stream bool) (*http.Response, string) {
		res := postTo(t, gs.URL, "/v1/chat/completions", chatBody(model, stream, ""))
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res, string(b)
	}

	res, body := answer("plain", false)
	if res.StatusCode != 200 || res.Header.Get("X-Sluice-Target") != "mock/text?len=60&chunk=5" || res.Header.Get("X-Sluice-Attempts") != "3" {
		t.Fatalf("got %d target %q attempts %q: %s; want 200 from the third target after two fallbacks",
			res.StatusCode, res.Header.Get("X-Sluice-Target"), res.Header.Get("X-Sluice-Attempts"), body)
	}
	for _, m := range []string{"text?len=10&fail=error", "text?len=60&chunk=5"} {
		if r := sent(m); r["stream"] != false || r["stream_options"] != nil {
			t.Errorf("%s: the upstream call was %v, want stream false, no stream_options", m, r)
		}
	}
	var cc struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(body), &cc); err != nil || len(cc.Choices) != 1 || len(cc.Choices[0].Message.Content) != 60 || cc.Usage.CompletionTokens == 0 {
		t.Errorf("got %s, want the 60 bytes of the answer and its usage", body)
	}

	// A streamed request to the same alias streams.
	res, body = answer("plain", true)
	if res.StatusCode != 200 || !strings.Contains(body, "[DONE]") {
		t.Fatalf("streamed: got %d %s", res.StatusCode, body)
	}
	if r := sent("text?len=60&chunk=5"); r["stream"] != true {
		t.Errorf("a streamed request made the upstream call %v, want stream true", r)
	}

	// Headers within first_event, the body later: the answer, not a timeout.
	res, body = answer("slowbody", false)
	if res.StatusCode != 200 || !strings.Contains(body, "slow but whole") {
		t.Errorf("slow body: got %d %s, want the answer (first_event bounds the headers only)", res.StatusCode, body)
	}

	// A target's upstream: stream wins over its alias's plain.
	if res, body = answer("mixed", false); res.StatusCode != 200 {
		t.Fatalf("mixed: got %d %s", res.StatusCode, body)
	}
	if r := sent("text?len=20&seed=7"); r["stream"] != true {
		t.Errorf("a target with upstream: stream made the call %v, want stream true", r)
	}
}
