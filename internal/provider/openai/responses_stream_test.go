package openai

import (
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// rev frames one Responses event as OpenAI sends it: an event line naming the type, and the
// type again in the data.
func rev(typ, fields string) string {
	data := `{"type":"` + typ + `"`
	if fields != "" {
		data += "," + fields
	}
	return "event: " + typ + "\ndata: " + data + "}\n\n"
}

var (
	respCreated   = rev("response.created", `"sequence_number":0,"response":{"id":"resp_1","model":"m","status":"in_progress","usage":null}`)
	respText      = rev("response.output_text.delta", `"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hello"`)
	respCompleted = rev("response.completed", `"response":{"id":"resp_1","model":"m","status":"completed","usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":8},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":15}}`)
	fcAdded       = rev("response.output_item.added", `"output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"look","arguments":""}`)
	fcDone        = rev("response.output_item.done", `"output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"look","arguments":"{\"x\":1}"}`)
)

const (
	startLine = "start choice=0 id=\"resp_1\" model=\"m\"\n"
	textLine  = "text choice=0 text=\"Hello\"\n"
	usageLine = "usage choice=0 prompt=10 completion=5 total=15 cached=8 reasoning=2\n"
	stopLines = usageLine + "done choice=0 finish=stop\neof\n"
	callLine  = "tool_call choice=0 index=0 id=\"call_1\" name=\"look\" args=\"\"\n"
)

func TestResponsesStream(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		encrypted bool
		want      string // the transcript
	}{
		{name: "text with cached and reasoning tokens", body: respCreated + respText + respCompleted,
			want: startLine + textLine + stopLines},
		{name: "keep-alive comments and in_progress are skipped",
			body: ": ping\n\n" + respCreated + rev("response.in_progress", `"response":{"id":"resp_1"}`) + ": ping\n\n" + respText + respCompleted,
			want: startLine + textLine + stopLines},
		{name: "refusal", body: respCreated + rev("response.refusal.delta", `"item_id":"msg_1","delta":"No."`) + respCompleted,
			want: startLine + "refusal choice=0 text=\"No.\"\n" + stopLines},
		{name: "completed without usage", body: respCreated + respText + rev("response.completed", `"response":{"id":"resp_1","usage":null}`),
			want: startLine + textLine + "done choice=0 finish=stop\neof\n"},
		{name: "incomplete at max_output_tokens",
			body: respCreated + respText + rev("response.incomplete", `"response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":8},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":15}}`),
			want: startLine + textLine + usageLine + "done choice=0 finish=length\neof\n"},
		{name: "incomplete by the content filter",
			body: respCreated + respText + rev("response.incomplete", `"response":{"status":"incomplete","incomplete_details":{"reason":"content_filter"}}`),
			want: startLine + textLine + "done choice=0 finish=content_filter\neof\n"},
		{name: "nothing is read after the terminal event", body: respCreated + respText + respCompleted + "data: <html>\n\n",
			want: startLine + textLine + stopLines},
		{name: "type only in the event line", body: respCreated + "event: response.output_text.delta\ndata: {\"delta\":\"Hello\"}\n\n" + respCompleted,
			want: startLine + textLine + stopLines},
		{name: "unknown events are skipped, whatever their shape",
			body: respCreated + rev("response.web_search_call.searching", `"item_id":7,"delta":{"x":1}`) + rev("response.output_text.annotation.added", `"annotation":{}`) + respText + respCompleted,
			want: startLine + textLine + stopLines},
		{name: "arguments only at output_item.done", body: respCreated + fcAdded + fcDone + respCompleted,
			want: startLine + callLine + "tool_call choice=0 index=0 id=\"\" name=\"\" args=\"{\\\"x\\\":1}\"\n" + usageLine + "done choice=0 finish=tool_calls\neof\n"},
		{name: "arguments only at function_call_arguments.done, sent once",
			body: respCreated + fcAdded + rev("response.function_call_arguments.done", `"item_id":"fc_1","output_index":0,"arguments":"{}"`) + fcDone + respCompleted,
			want: startLine + callLine + "tool_call choice=0 index=0 id=\"\" name=\"\" args=\"{}\"\n" + usageLine + "done choice=0 finish=tool_calls\neof\n"},
		{name: "arguments in output_item.added",
			body: respCreated + rev("response.output_item.added", `"output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"look","arguments":"{}"}`) + fcDone + respCompleted,
			want: startLine + "tool_call choice=0 index=0 id=\"call_1\" name=\"look\" args=\"{}\"\n" + usageLine + "done choice=0 finish=tool_calls\neof\n"},
		{name: "deltas keyed by output index only",
			body: respCreated + fcAdded + rev("response.function_call_arguments.delta", `"output_index":0,"delta":"{}"`) + fcDone + respCompleted,
			want: startLine + callLine + "tool_call choice=0 index=0 id=\"\" name=\"\" args=\"{}\"\n" + usageLine + "done choice=0 finish=tool_calls\neof\n"},
		{name: "a call never announced gets its id and name at output_item.done",
			body: respCreated + rev("response.function_call_arguments.delta", `"item_id":"fc_1","output_index":0,"delta":"{\"x\":1}"`) + fcDone + respCompleted,
			want: startLine + "tool_call choice=0 index=0 id=\"\" name=\"\" args=\"{\\\"x\\\":1}\"\n" + "tool_call choice=0 index=0 id=\"call_1\" name=\"look\" args=\"\"\n" +
				usageLine + "done choice=0 finish=tool_calls\neof\n"},
		{name: "summary parts are set apart",
			body: respCreated + rev("response.reasoning_summary_text.delta", `"item_id":"rs_1","summary_index":0,"delta":"**A**"`) +
				rev("response.reasoning_summary_text.delta", `"item_id":"rs_1","summary_index":0,"delta":" one"`) +
				rev("response.reasoning_summary_text.delta", `"item_id":"rs_1","summary_index":1,"delta":"**B**"`) +
				rev("response.output_item.done", `"output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"**A** one"},{"type":"summary_text","text":"**B**"}],"encrypted_content":"gAAA"}`) +
				respText + respCompleted,
			want: startLine + "reasoning choice=0 field= text=\"**A**\"\nreasoning choice=0 field= text=\" one\"\nreasoning choice=0 field= text=\"\\n\\n**B**\"\n" + textLine + stopLines},
		{name: "summary only in the done item, encrypted content asked for", encrypted: true,
			body: respCreated + rev("response.output_item.done", `"output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"a"},{"type":"summary_text","text":"b"}],"encrypted_content":"gAAA"}`) +
				respText + respCompleted,
			want: startLine + "reasoning choice=0 field= text=\"a\"\nreasoning choice=0 field= text=\"\\n\\nb\"\n" +
				"reasoning choice=0 field= text=\"\" id=\"rs_1\" encrypted=\"gAAA\"\n" + textLine + stopLines},
		{name: "a message sent whole at output_item.done",
			body: respCreated + rev("response.output_item.added", `"output_index":0,"item":{"type":"message","id":"msg_1","content":[]}`) +
				rev("response.output_item.done", `"output_index":0,"item":{"type":"message","id":"msg_1","content":[{"type":"output_text","text":"Hello"},{"type":"refusal","refusal":"No."}]}`) + respCompleted,
			want: startLine + textLine + "refusal choice=0 text=\"No.\"\n" + stopLines},
		{name: "streamed text is not sent again at output_item.done",
			body: respCreated + respText + rev("response.output_item.done", `"output_index":0,"item":{"type":"message","id":"msg_1","content":[{"type":"output_text","text":"Hello"}]}`) + respCompleted,
			want: startLine + textLine + stopLines},
		{name: "failed: rate limit", body: respCreated + rev("response.failed", `"response":{"status":"failed","error":{"code":"rate_limit_exceeded","message":"Slow down."}}`),
			want: startLine + "error kind=rate_limited code=\"rate_limit_exceeded\" type=\"\" message=\"openai stream error: Slow down.\"\n"},
		{name: "failed: server error after text", body: respCreated + respText + rev("response.failed", `"response":{"status":"failed","error":{"code":"server_error","message":"Oops."}}`),
			want: startLine + textLine + "error kind=unavailable code=\"server_error\" type=\"\" message=\"openai stream error: Oops.\"\n"},
		{name: "failed: a request problem still falls back", body: respCreated + rev("response.failed", `"response":{"error":{"code":"invalid_prompt","message":"Bad."}}`),
			want: startLine + "error kind=unavailable code=\"invalid_prompt\" type=\"\" message=\"openai stream error: Bad.\"\n"},
		{name: "failed without an error object", body: respCreated + rev("response.failed", `"response":{"error":null}`),
			want: startLine + "error kind=unavailable code=\"\" type=\"\" message=\"openai stream error: response.failed without an error\"\n"},
		{name: "flat error: rate limit", body: respCreated + rev("error", `"code":"rate_limit_exceeded","message":"Slow down.","param":null`),
			want: startLine + "error kind=rate_limited code=\"rate_limit_exceeded\" type=\"\" message=\"openai stream error: Slow down.\"\n"},
		{name: "nested error: server error", body: respCreated + rev("error", `"error":{"type":"server_error","code":"server_error","message":"Oops.","param":null}`),
			want: startLine + "error kind=unavailable code=\"server_error\" type=\"server_error\" message=\"openai stream error: Oops.\"\n"},
		{name: "both shapes: the nested one wins", body: respCreated + rev("error", `"code":"x","message":"flat","error":{"type":"rate_limit_error","code":"rate_limit_exceeded","message":"nested"}`),
			want: startLine + "error kind=rate_limited code=\"rate_limit_exceeded\" type=\"rate_limit_error\" message=\"openai stream error: nested\"\n"},
		{name: "error as a string", body: respCreated + "event: error\ndata: {\"error\":\"overloaded\"}\n\n",
			want: startLine + "error kind=unavailable code=\"\" type=\"\" message=\"openai stream error: overloaded\"\n"},
		{name: "error event without a message", body: "event: error\ndata: {}\n\n",
			want: "error kind=unavailable code=\"\" type=\"\" message=\"openai stream error: error event without a message\"\n"},
		{name: "no terminal event", body: respCreated + respText,
			want: startLine + textLine + "error kind=truncated code=\"\" type=\"\" message=\"openai: stream ended before response.completed\"\n"},
		{name: "[DONE] before the terminal event", body: respCreated + respText + "data: [DONE]\n\n",
			want: startLine + textLine + "error kind=truncated code=\"\" type=\"\" message=\"openai: stream ended before response.completed\"\n"},
		{name: "empty body", body: "",
			want: "error kind=truncated code=\"\" type=\"\" message=\"openai: stream ended before response.completed\"\n"},
		{name: "cut inside the terminal event", body: respCreated + respText + respCompleted[:len(respCompleted)-40],
			want: startLine + textLine + "error kind=truncated code=\"\" type=\"\" message=\"openai: stream cut inside its last event\"\n"},
		{name: "cut before the blank line", body: respCreated + respText + strings.TrimSuffix(respCompleted, "\n"),
			want: startLine + textLine + "error kind=truncated code=\"\" type=\"\" message=\"openai: stream cut inside its last event\"\n"},
		{name: "not JSON", body: respCreated + "data: <html>\n\n",
			want: startLine + "error kind=unavailable code=\"\" type=\"\" message=\"openai sent an event that is not JSON\"\n"},
		{name: "a known event in a shape it must not have", body: respCreated + rev("response.output_text.delta", `"item_id":5,"delta":"x"`),
			want: startLine + "error kind=unavailable code=\"\" type=\"\" message=\"openai sent a malformed response.output_text.delta event\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, providertest.SSE(tt.body))
			var include []string
			if tt.encrypted {
				include = []string{includeEncrypted}
			}
			evs, end := providertest.Drain(t, openResponses(t, u.responses(Config{}), respRequest(include...)))
			if got := transcript(evs, end); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestResponsesParallelIndexes(t *testing.T) {
	// Calls interleaved with a message and a reasoning item: indexes count calls only.
	body := respCreated +
		rev("response.output_item.added", `"output_index":0,"item":{"type":"reasoning","id":"rs_1"}`) +
		rev("response.output_item.added", `"output_index":1,"item":{"type":"function_call","id":"fc_a","call_id":"call_a","name":"a","arguments":""}`) +
		rev("response.output_item.added", `"output_index":2,"item":{"type":"message","id":"msg_1"}`) +
		rev("response.output_item.added", `"output_index":3,"item":{"type":"function_call","id":"fc_b","call_id":"call_b","name":"b","arguments":""}`) +
		rev("response.function_call_arguments.delta", `"item_id":"fc_b","output_index":3,"delta":"{\"b\":"`) +
		rev("response.function_call_arguments.delta", `"item_id":"fc_a","output_index":1,"delta":"{\"a\":1}"`) +
		rev("response.function_call_arguments.delta", `"item_id":"fc_b","output_index":3,"delta":"2}"`) +
		respCompleted
	u := newUpstream(t, providertest.SSE(body))
	evs, end := providertest.Drain(t, openResponses(t, u.responses(Config{}), respRequest()))
	wantEOF(t, end)
	c := assemble(evs).Choices[0]
	if len(c.ToolCalls) != 2 || c.Finish != "tool_calls" {
		t.Fatalf("got %+v, want 2 calls and tool_calls", c)
	}
	wantCall(t, c.ToolCalls[0], "call_a", "a", `{"a":1}`)
	wantCall(t, c.ToolCalls[1], "call_b", "b", `{"b":2}`)
}
