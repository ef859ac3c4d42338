package openai

import (
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// Output items of Codex's tools: a call of a namespace's function gets its flat name, a
// custom tool's call the arguments of a function of "input", and a hosted tool's call (here
// with its progress events, compacted, and not another item's) passes whole, compacted, in its place among
// the calls; a response with only such items is not a tool_calls finish.
func TestResponsesCodexItems(t *testing.T) {
	// Its data in two lines, which SSE joins with a newline: the item is compacted.
	wsDone := "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":" +
		`{"id":"ws_1","type":"web_search_call","status":"completed",` + "\ndata: " + `"action":{"type":"search","query":"q"}}}` + "\n\n"
	body := respCreated +
		rev("response.output_item.added", `"output_index":0,"item":{"id":"ws_1","type":"web_search_call","status":"in_progress"}`) +
		rev("response.web_search_call.in_progress", `"item_id":"ws_1","output_index":0`) +
		rev("response.web_search_call.searching", `"item_id":"ws_1", "output_index":0`) +
		rev("response.web_search_call.completed", `"output_index":0`) +
		rev("response.output_text.annotation.added", `"item_id":"msg_9","output_index":5`) +
		wsDone +
		rev("response.output_item.added", `"output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"search","namespace":"mcp__docs","arguments":""}`) +
		rev("response.output_item.done", `"output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"search","namespace":"mcp__docs","arguments":"{}"}`) +
		rev("response.output_item.added", `"output_index":2,"item":{"type":"custom_tool_call","id":"ctc_1","call_id":"call_2","name":"apply_patch","input":""}`) +
		rev("response.custom_tool_call_input.delta", `"item_id":"ctc_1","output_index":2,"delta":"*** Begin"`) +
		rev("response.output_item.done", `"output_index":2,"item":{"type":"custom_tool_call","id":"ctc_1","call_id":"call_2","name":"apply_patch","input":"*** Begin Patch\n\"x\""}`) +
		respCompleted
	u := newUpstream(t, providertest.SSE(body))
	evs, end := providertest.Drain(t, openResponses(t, u.responses(Config{}), respRequest()))
	want := startLine +
		`item choice=0 index=0 raw={"id":"ws_1","type":"web_search_call","status":"completed","action":{"type":"search","query":"q"}}` +
		` progress={"type":"response.web_search_call.in_progress","item_id":"ws_1","output_index":0}` +
		` progress={"type":"response.web_search_call.searching","item_id":"ws_1","output_index":0}` +
		` progress={"type":"response.web_search_call.completed","output_index":0}` + "\n" +
		`tool_call choice=0 index=1 id="call_1" name="mcp__docs__search" args=""` + "\n" +
		`tool_call choice=0 index=1 id="" name="" args="{}"` + "\n" +
		`tool_call choice=0 index=2 id="call_2" name="apply_patch" args=""` + "\n" +
		`tool_call choice=0 index=2 id="" name="" args="{\"input\":\"*** Begin Patch\\n\\\"x\\\"\"}"` + "\n" +
		usageLine + "done choice=0 finish=tool_calls\neof\n"
	if got := transcript(evs, end); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	u = newUpstream(t, providertest.SSE(respCreated+wsDone+respText+respCompleted))
	evs, end = providertest.Drain(t, openResponses(t, u.responses(Config{}), respRequest()))
	if got := transcript(evs, end); !strings.HasSuffix(got, "done choice=0 finish=stop\neof\n") {
		t.Errorf("got\n%s\nwant a stop finish: a hosted call is not the client's to run", got)
	}
}

// A Responses client's body (Native) goes upstream as it came: model and stream replaced,
// store added as false when absent, every other member byte for byte, in order.
func TestEncodeResponsesNative(t *testing.T) {
	native := func(pairs ...string) []llm.Field {
		var fs []llm.Field
		for i := 0; i < len(pairs); i += 2 {
			fs = append(fs, llm.Field{Name: pairs[i], Value: []byte(pairs[i+1])})
		}
		return fs
	}
	tests := []struct {
		native []llm.Field
		want   string
	}{
		{native("model", `"codex"`, "input", "[\n {\"type\":\"web_search_call\"}]", "tools", `[{"type":"namespace","name":"n","tools":[]}]`,
			"store", "true", "stream", "false", "client_metadata", `{"a":"b"}`),
			"{\"model\":\"gpt-5\",\"input\":[\n {\"type\":\"web_search_call\"}],\"tools\":[{\"type\":\"namespace\",\"name\":\"n\",\"tools\":[]}],\"store\":true,\"stream\":true,\"client_metadata\":{\"a\":\"b\"}}"},
		{native("model", `"codex"`, "input", `"hi"`),
			`{"model":"gpt-5","input":"hi","store":false,"stream":true}`},
		{native("model", `"codex"`, "input", `"hi"`, "store", "null"),
			`{"model":"gpt-5","input":"hi","store":false,"stream":true}`},
	}
	for _, tt := range tests {
		// The llm fields, which the other adapters read, do not change the native body.
		req := &llm.Request{Model: "gpt-5", Native: &llm.Native{Wire: "responses", Fields: tt.native}, Messages: []llm.Message{userText("other")},
			Tools: []llm.Tool{{Kind: llm.ToolHosted, Name: "web_search"}}}
		got, err := encodeResponsesRequest(req)
		if err != nil || string(got) != tt.want {
			t.Errorf("got %s, %v\nwant %s", got, err, tt.want)
		}
	}
}

// A Messages client's server tool cannot go to a Responses target: Unsupported, so the chain
// moves on, rather than a request without it.
func TestResponsesRefusesAnthropicOnly(t *testing.T) {
	req := &llm.Request{Model: "gpt-5", Messages: []llm.Message{userText("hi")},
		Native: &llm.Native{Wire: "anthropic", Body: []byte(`{}`), Only: []string{"bash_20250124"}}}
	if _, err := encodeResponsesRequest(req); llm.KindOf(err) != llm.Unsupported {
		t.Errorf("got %v, want Unsupported", err)
	}
}
