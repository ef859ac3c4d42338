package server_test

import (
	"net/http/httptest"
	"testing"

	"github.com/sluice-gw/sluice/internal/mockllm"
)

// A hosted tool's progress events (a recorded web search) reach a Responses client from a
// Responses target, between its item's added and done, in the upstream's order, renumbered:
// the gateway's sequence_number and the item's output_index in the gateway's output, the
// upstream's item_id. A Chat client of the same target gets none of them.
func TestResponsesHostedToolProgress(t *testing.T) {
	ms := httptest.NewServer(mockllm.New(mockllm.Options{FixturesDir: "../provider/openai/testdata"}))
	t.Cleanup(ms.Close)
	gs := serveConfig(t, `
providers:
  resp: {kind: openai, api: responses, base_url: "${MOCK_URL}/v1", api_key: sk-test}
models:
  default: [resp/echo]
`, map[string]string{"MOCK_URL": ms.URL})
	t.Cleanup(gs.Close)
	const ws = "ws_68c187d0973881928c78c79e50ae028805ca09a4773fcd25"
	model := "resp/replay?file=openai-responses-web-search.sse"
	evs, raw := respStream(t, postTo(t, gs.URL, "/v1/responses", respBody(model, true, "")).Body)
	var got []string
	out := -1
	for _, e := range evs {
		item, _ := e.data["item"].(map[string]any)
		if e.str("item_id") != ws && (item == nil || item["id"] != ws) {
			continue
		}
		idx, ok := e.data["output_index"].(float64)
		if !ok {
			t.Fatalf("%s without an output_index", e.typ)
		}
		if out < 0 {
			out = int(idx)
		}
		if int(idx) != out {
			t.Errorf("%s: output_index %v, want the item's %d", e.typ, idx, out)
		}
		got = append(got, e.typ)
	}
	want := []string{"response.output_item.added", "response.web_search_call.in_progress",
		"response.web_search_call.searching", "response.web_search_call.completed", "response.output_item.done"}
	if len(got) != len(want) {
		t.Fatalf("the search's events %q, want %q\n%s", got, want, raw)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d of the search: %s, want %s", i, got[i], want[i])
		}
	}
	if a := assemble(evs); a.last != "response.completed" || a.text == "" {
		t.Errorf("got terminal %q text %q, want a completed answer with text", a.last, a.text)
	}

	body := `{"model":` + quote(model) + `,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	p := parse(t, frames(t, (&gateway{url: gs.URL}).post(t, body).Body))
	if !p.done || p.err != nil || p.text[0] == "" {
		t.Errorf("Chat client: done %v err %v text %q, want the answer's text", p.done, p.err, p.text[0])
	}
}
