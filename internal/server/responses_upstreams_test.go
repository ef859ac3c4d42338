package server_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/mockllm"
)

// upstreamsGateway serves one mock through three adapters: Chat Completions (chat/),
// the Responses API (resp/) and Anthropic Messages (anth/).
func upstreamsGateway(t *testing.T, models string) (string, *mockllm.Server) {
	t.Helper()
	mock := mockllm.New(mockllm.Options{})
	ms := httptest.NewServer(mock)
	gs := serveConfig(t, `
providers:
  chat: {kind: openai-compatible, base_url: "${MOCK_URL}/v1"}
  resp: {kind: openai, api: responses, base_url: "${MOCK_URL}/v1", api_key: sk-test}
  anth: {kind: anthropic, base_url: "${MOCK_URL}", api_key: sk-ant-test}
models:
  default: [chat/echo]
`+models, map[string]string{"MOCK_URL": ms.URL})
	t.Cleanup(func() {
		gs.Close()
		ms.Close()
	})
	return gs.URL, mock
}

// /v1/responses is served by any adapter, streamed or not, with the same output.
func TestResponsesServedByEveryUpstream(t *testing.T) {
	url, _ := upstreamsGateway(t, "")
	scripts := []struct {
		script         string
		text           string // "" : any non-empty text
		calls          int
		reasoning, inc bool
	}{
		{script: "echo", text: "Hello there, gateway."},
		{script: "tools?calls=2&say=Checking.", text: "Checking.", calls: 2},
		{script: "reason?think=24&len=16", reasoning: true},
		{script: "text?len=20&finish=length", inc: true},
	}
	for _, p := range []string{"chat", "resp", "anth"} {
		for _, sc := range scripts {
			model := p + "/" + sc.script
			t.Run(model, func(t *testing.T) {
				evs, _ := respStream(t, postTo(t, url, "/v1/responses", respBody(model, true, "")).Body)
				a := assemble(evs)
				want := "response.completed"
				if sc.inc {
					want = "response.incomplete"
				}
				if a.last != want || a.err != nil {
					t.Fatalf("got terminal %q error %v, want %s", a.last, a.err, want)
				}
				if (sc.text != "" && a.text != sc.text) || a.text == "" || len(a.args) != sc.calls || (a.summary != "") != sc.reasoning {
					t.Errorf("got text %q, %d calls, summary %q; want %q, %d, reasoning %v", a.text, len(a.args), a.summary, sc.text, sc.calls, sc.reasoning)
				}
				checkOutputMatches(t, a)
				body, _ := io.ReadAll(postTo(t, url, "/v1/responses", respBody(model, false, "")).Body)
				if !strings.Contains(string(body), `"status":"`+strings.TrimPrefix(want, "response.")+`"`) {
					t.Errorf("got non-streamed %s, want status %s", body, want)
				}
			})
		}
	}
}

func TestResponsesFailuresAcrossUpstreams(t *testing.T) {
	url, mock := upstreamsGateway(t, `  fb: ["resp/text?fail=error", "anth/text?len=20"]
  stored: ["chat/echo", "resp/echo"]
`)
	// A Responses target whose stream fails before any output falls back.
	r := postTo(t, url, "/v1/responses", respBody("fb", true, ""))
	evs, _ := respStream(t, r.Body)
	if a := assemble(evs); r.Header.Get("X-Sluice-Target") != "anth/text?len=20" || a.last != "response.completed" || r.Header.Get("X-Sluice-Attempts") != "2" {
		t.Errorf("got %s after %s attempts (%s), want the Anthropic target after 2", r.Header.Get("X-Sluice-Target"), r.Header.Get("X-Sluice-Attempts"), a.last)
	}
	// After text (after= counts each dialect's frames), each upstream's failure is the
	// error event, then response.failed.
	for _, model := range []string{"chat/text?len=80&fail=error&after=8", "resp/text?len=80&fail=error&after=8", "anth/text?len=80&fail=error&after=8"} {
		evs, _ := respStream(t, postTo(t, url, "/v1/responses", respBody(model, true, "")).Body)
		if a := assemble(evs); a.text == "" || a.err == nil || a.last != "response.failed" {
			t.Errorf("%s: got text %q error %v end %q, want text, the error event, response.failed", model, a.text, a.err, a.last)
		}
	}
	// previous_response_id is the gateway's to resolve (state.go): one it never kept is
	// OpenAI's 400, and a Responses target is never asked to store.
	r = postTo(t, url, "/v1/responses", respBody("stored", false, `,"previous_response_id":"resp_prev","store":true`))
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != 400 || !strings.Contains(string(b), `"code":"previous_response_not_found"`) {
		t.Errorf("unknown previous_response_id: got %d %s, want 400 previous_response_not_found", r.StatusCode, b)
	}
	r = postTo(t, url, "/v1/responses", respBody("resp/echo", false, `,"store":true`))
	io.Copy(io.Discard, r.Body)
	if up := string(mock.LastRequest("echo")); r.StatusCode != 200 || !strings.Contains(up, `"store":false`) {
		t.Errorf("store: true to a Responses target: got %d, upstream request %s; want store: false upstream", r.StatusCode, up)
	}
}

// Each reasoning block keeps its own opaque part: a block's encrypted content or signature
// ends it, and the next block is a new item.
func TestResponsesReasoningBlocks(t *testing.T) {
	blocks := []llm.Event{
		{Type: llm.EvReasoning, Text: "First."}, {Type: llm.EvReasoning, Encrypted: "sig-1", ID: "b1"},
		{Type: llm.EvReasoning, Encrypted: "redacted-2"},
		{Type: llm.EvReasoning, Text: "Third."}, {Type: llm.EvReasoning, Encrypted: "sig-3"},
		{Type: llm.EvText, Text: "Answer."}, {Type: llm.EvDone, Finish: "stop"},
	}
	url := serveFakes(t, map[string]*fakeProvider{"up": {events: blocks}}, map[string][]string{"r": {"up/m"}})
	body, _ := io.ReadAll(postTo(t, url, "/v1/responses", respBody("r", false, `,"include":["reasoning.encrypted_content"]`)).Body)
	want := `"output":[` +
		`{"id":"rs_test_0","type":"reasoning","summary":[{"type":"summary_text","text":"First."}],"encrypted_content":"sig-1"},` +
		`{"id":"rs_test_1","type":"reasoning","summary":[],"encrypted_content":"redacted-2"},` +
		`{"id":"rs_test_2","type":"reasoning","summary":[{"type":"summary_text","text":"Third."}],"encrypted_content":"sig-3"},` +
		`{"id":"msg_test_3","type":"message"`
	if !strings.Contains(string(body), want) {
		t.Errorf("got %s, want three reasoning items then the message", body)
	}
}
