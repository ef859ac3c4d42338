package anthropic

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/providertest"
	wire "github.com/sluice-gw/sluice/internal/schema/anthropic"
)

const (
	msgStart   = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"usage\":{\"input_tokens\":10,\"cache_read_input_tokens\":100,\"cache_creation_input_tokens\":50,\"output_tokens\":1}}}\n\n"
	textStart  = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	textDelta  = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n"
	blockStop  = "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
	msgDelta   = "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":7}}\n\n"
	msgStop    = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	ping       = "event: ping\ndata: {\"type\": \"ping\"}\n\n"
	overloaded = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
)

func toolStart(index int, id, name string) string {
	return "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":" + strconv.Itoa(index) +
		",\"content_block\":{\"type\":\"tool_use\",\"id\":\"" + id + "\",\"name\":\"" + name + "\",\"input\":{}}}\n\n"
}

func jsonDelta(index int, partial string) string {
	return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":" + strconv.Itoa(index) +
		",\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":" + quote(partial) + "}}\n\n"
}

func stop(index int) string {
	return "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":" + strconv.Itoa(index) + "}\n\n"
}

func quote(s string) string {
	b, _ := wire.Marshal(s)
	return string(b)
}

func TestStreamEnds(t *testing.T) {
	complete := msgStart + textStart + textDelta + blockStop + msgDelta + msgStop
	tests := []struct {
		name string
		body string
		kind llm.Kind // KindNone: want io.EOF
		text string
	}{
		{"complete", complete, llm.KindNone, "Hello"},
		{"CRLF line ends", strings.ReplaceAll(complete, "\n", "\r\n"), llm.KindNone, "Hello"},
		{"CR line ends", strings.ReplaceAll(complete, "\n", "\r"), llm.KindNone, "Hello"},
		{"pings and comments anywhere", ping + msgStart + ": keepalive\n\n" + textStart + ping + textDelta + blockStop + ping + msgDelta + msgStop, llm.KindNone, "Hello"},
		{"unknown event types ignored", msgStart + "event: future_event\ndata: {\"type\":\"future_event\",\"x\":1}\n\n" + textStart + textDelta + msgDelta + msgStop, llm.KindNone, "Hello"},
		{"data in two lines", msgStart + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\ndata: \"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n" + msgDelta + msgStop, llm.KindNone, "Hello"},
		{"what follows message_stop is not read", complete + "data: not json\n\n" + overloaded, llm.KindNone, "Hello"},
		{"no message_stop", msgStart + textStart + textDelta + blockStop + msgDelta, llm.Truncated, "Hello"},
		{"message_stop without its blank line", msgStart + textStart + textDelta + blockStop + msgDelta + strings.TrimSuffix(msgStop, "\n\n"), llm.Truncated, "Hello"},
		{"message_stop with half its blank line", msgStart + textStart + textDelta + msgDelta + strings.TrimSuffix(msgStop, "\n"), llm.Truncated, "Hello"},
		{"cut inside an event", msgStart + textStart + textDelta + msgDelta[:40], llm.Truncated, "Hello"},
		{"cut inside the data of the last event", msgStart + textStart + textDelta + textDelta[:len(textDelta)-10], llm.Truncated, "Hello"},
		{"empty body", "", llm.Truncated, ""},
		{"only pings", ping + ping, llm.Truncated, ""},
		{"overloaded before content", msgStart + overloaded, llm.Unavailable, ""},
		{"api_error", msgStart + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"Internal server error\"}}\n\n", llm.Unavailable, ""},
		{"rate limit error", msgStart + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow down\"}}\n\n", llm.RateLimited, ""},
		{"invalid request error in the stream falls back", msgStart + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"bad\"}}\n\n", llm.Unavailable, ""},
		{"error without event line", msgStart + "data: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", llm.Unavailable, ""},
		{"error event without data", msgStart + "event: error\n\n", llm.Unavailable, ""},
		{"error event with a string error", msgStart + "event: error\ndata: {\"error\":\"upstream connect error\"}\n\n", llm.Unavailable, ""},
		{"not JSON", msgStart + "event: content_block_delta\ndata: <html>\n\n" + msgStop, llm.Unavailable, ""},
		{"input for a block that never started", msgStart + jsonDelta(3, `{"a":1}`) + msgStop, llm.Unavailable, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, providertest.SSE(tt.body))
			evs, end := providertest.Drain(t, openStream(t, u.client(Config{})))
			if tt.kind == llm.KindNone {
				wantEOF(t, end)
			} else {
				le := wantKind(t, end, tt.kind)
				if le.Target != "" {
					t.Errorf("target: got %q, want it left to the chain", le.Target)
				}
			}
			r := assemble(evs)
			got := ""
			if len(r.Choices) > 0 {
				got = r.Choices[0].Text
			}
			if got != tt.text {
				t.Errorf("text: got %q, want %q", got, tt.text)
			}
			if tt.kind != llm.KindNone {
				for _, e := range evs {
					if e.Type == llm.EvDone {
						t.Errorf("got a finish, then %v: want no finish in a failed stream", tt.kind)
					}
				}
			}
		})
	}
}

func TestUsageWithCache(t *testing.T) {
	// message_delta repeats usage cumulatively; a field it leaves out keeps its last value.
	delta := "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"cache_read_input_tokens\":120,\"output_tokens\":7}}\n\n"
	u := newUpstream(t, providertest.SSE(msgStart+textStart+textDelta+blockStop+msgDelta+delta+msgStop))
	evs, end := providertest.Drain(t, openStream(t, u.client(Config{})))
	wantEOF(t, end)
	n := len(evs)
	if n < 2 || evs[n-2].Type != llm.EvUsage || evs[n-1].Type != llm.EvDone {
		t.Fatalf("got %s, want usage then done at the end", transcript(evs, end))
	}
	got := *evs[n-2].Usage
	want := llm.Usage{PromptTokens: 10 + 120 + 50, CompletionTokens: 7, TotalTokens: 187, CachedTokens: 120, CacheWriteTokens: 50}
	if got != want {
		t.Errorf("usage: got %+v, want %+v", got, want)
	}
}

func TestFinishReasons(t *testing.T) {
	for reason, want := range map[string]string{
		"end_turn": "stop", "stop_sequence": "stop", "pause_turn": "stop", "max_tokens": "length",
		"tool_use": "tool_calls", "refusal": "content_filter", "model_context_window_exceeded": "length",
		"some_future_reason": "stop",
	} {
		t.Run(reason, func(t *testing.T) {
			delta := strings.Replace(msgDelta, "end_turn", reason, 1)
			u := newUpstream(t, providertest.SSE(msgStart+textStart+textDelta+delta+msgStop))
			evs, end := providertest.Drain(t, openStream(t, u.client(Config{})))
			wantEOF(t, end)
			if got := assemble(evs).Choices[0].Finish; got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func TestParallelToolCalls(t *testing.T) {
	// Tool.Index counts tool calls, not content blocks: block 0 is text.
	body := msgStart + textStart + textDelta + blockStop +
		toolStart(1, "toolu_a", "get_weather") + jsonDelta(1, "") + jsonDelta(1, `{"city":`) + jsonDelta(1, `"Paris"}`) + stop(1) +
		toolStart(2, "toolu_b", "list_files") + stop(2) +
		toolStart(3, "toolu_c", "get_time") + jsonDelta(3, `{"tz":"UTC"}`) + stop(3) +
		strings.Replace(msgDelta, "end_turn", "tool_use", 1) + msgStop
	u := newUpstream(t, providertest.SSE(body))
	evs, end := providertest.Drain(t, openStream(t, u.client(Config{})))
	wantEOF(t, end)
	c := assemble(evs).Choices[0]
	if len(c.ToolCalls) != 3 || c.Finish != "tool_calls" {
		t.Fatalf("got %+v, want three calls, finish tool_calls", c)
	}
	wantCall(t, c.ToolCalls[0], "toolu_a", "get_weather", `{"city":"Paris"}`)
	wantCall(t, c.ToolCalls[1], "toolu_b", "list_files", `{}`)
	wantCall(t, c.ToolCalls[2], "toolu_c", "get_time", `{"tz":"UTC"}`)
	for i := range 3 {
		wantFirstFragment(t, evs, i, c.ToolCalls[i].ID, c.ToolCalls[i].Name)
	}
}

func TestToolCutBeforeAnyInput(t *testing.T) {
	// max_tokens right after the tool_use started: the arguments are what came, nothing,
	// not an invented "{}".
	body := msgStart + toolStart(0, "toolu_a", "write") + strings.Replace(msgDelta, "end_turn", "max_tokens", 1) + msgStop
	u := newUpstream(t, providertest.SSE(body))
	evs, end := providertest.Drain(t, openStream(t, u.client(Config{})))
	wantEOF(t, end)
	c := assemble(evs).Choices[0]
	if len(c.ToolCalls) != 1 || c.ToolCalls[0].Arguments != "" || c.Finish != "length" {
		t.Errorf("got %+v, want one call with no arguments, finish length", c)
	}
}

func TestErrorsAreSticky(t *testing.T) {
	u := newUpstream(t, providertest.SSE(msgStart+overloaded))
	s := openStream(t, u.client(Config{}))
	_, first := providertest.Drain(t, s)
	for range 2 {
		if _, err := s.Recv(); err != first {
			t.Fatalf("got %v, want the same error %v", err, first)
		}
	}
}

func TestEOFIsSticky(t *testing.T) {
	u := newUpstream(t, providertest.SSE(msgStart+msgStop))
	s := openStream(t, u.client(Config{}))
	_, end := providertest.Drain(t, s)
	wantEOF(t, end)
	if _, err := s.Recv(); err != io.EOF {
		t.Fatalf("got %v, want io.EOF again", err)
	}
}

func TestAbruptDisconnect(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, msgStart+textStart+textDelta+msgDelta[:30])
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close() // the chunked body never gets its terminator
		}
	})
	evs, end := providertest.Drain(t, openStream(t, u.client(Config{})))
	wantKind(t, end, llm.Truncated)
	if got := assemble(evs).Choices[0].Text; got != "Hello" {
		t.Errorf("text: got %q, want Hello", got)
	}
}

func TestRedactedThinkingAndServerTools(t *testing.T) {
	// A redacted_thinking block is opaque: a signature-like event with no text. A server tool
	// (run by Anthropic) is not a call for the client, and does not count among tool calls.
	body := msgStart +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"EmwKAhgBEgy\"}}\n\n" + stop(0) +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_search\",\"input\":{}}}\n\n" +
		jsonDelta(1, `{"query":"x"}`) + stop(1) +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"web_search_tool_result\",\"tool_use_id\":\"srvtoolu_1\",\"content\":[]}}\n\n" + stop(2) +
		toolStart(3, "toolu_a", "f") + jsonDelta(3, `{}`) + stop(3) +
		strings.Replace(msgDelta, "end_turn", "tool_use", 1) + msgStop
	u := newUpstream(t, providertest.SSE(body))
	evs, end := providertest.Drain(t, openStream(t, u.client(Config{})))
	wantEOF(t, end)
	want := "start choice=0 id=\"msg_1\" model=\"claude-sonnet-4-5\"\n" +
		"reasoning choice=0 field=reasoning_content text=\"\" encrypted=\"EmwKAhgBEgy\"\n" +
		"tool_call choice=0 index=0 id=\"toolu_a\" name=\"f\" args=\"\"\n" +
		"tool_call choice=0 index=0 id=\"\" name=\"\" args=\"{}\"\n" +
		"usage choice=0 prompt=160 completion=7 total=167 cached=100 cache_write=50 reasoning=0 estimated=false\n" +
		"done choice=0 finish=tool_calls\neof\n"
	if got := transcript(evs, end); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestReadShapes(t *testing.T) {
	// However the body's bytes arrive (one at a time, with the last data and io.EOF in one
	// Read), the verdict is the same: the end is judged on the bytes, not on the reads.
	complete := msgStart + textStart + textDelta + msgDelta + msgStop
	bodies := []struct {
		name string
		body string
		kind llm.Kind
	}{
		{"complete", complete, llm.KindNone},
		{"complete CRLF", strings.ReplaceAll(complete, "\n", "\r\n"), llm.KindNone},
		{"no blank line at the end", strings.TrimSuffix(complete, "\n"), llm.Truncated},
		{"CRLF, half a blank line at the end", strings.TrimSuffix(strings.ReplaceAll(complete, "\n", "\r\n"), "\r\n"), llm.Truncated},
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole": func(r io.Reader) io.Reader { return r }, "one byte": iotest.OneByteReader,
		"data with EOF": iotest.DataErrReader, "half": iotest.HalfReader,
	}
	for _, b := range bodies {
		for rn, wrap := range readers {
			t.Run(b.name+"/"+rn, func(t *testing.T) {
				s := newStream(context.Background(), origin{name: "anthropic"}, io.NopCloser(wrap(strings.NewReader(b.body))))
				defer s.Close()
				evs, end := providertest.Drain(t, s)
				if b.kind == llm.KindNone {
					wantEOF(t, end)
				} else {
					wantKind(t, end, b.kind)
				}
				if got := assemble(evs).Choices[0].Text; got != "Hello" {
					t.Errorf("text: got %q, want Hello", got)
				}
			})
		}
	}
}

// The stop reason as Anthropic said it, and the sequence that matched, travel on EvDone for
// a Messages client (which would otherwise get end_turn for stop_sequence).
func TestStopSequence(t *testing.T) {
	delta := strings.Replace(msgDelta, `"stop_reason":"end_turn","stop_sequence":null`, `"stop_reason":"stop_sequence","stop_sequence":"END"`, 1)
	u := newUpstream(t, providertest.SSE(msgStart+textStart+textDelta+delta+msgStop))
	evs, end := providertest.Drain(t, openStream(t, u.client(Config{})))
	wantEOF(t, end)
	last := evs[len(evs)-1]
	if last.Type != llm.EvDone || last.Finish != "stop" || last.Stop != "stop_sequence" || last.StopSequence != "END" {
		t.Errorf("got %+v, want done: stop, stop_sequence END", last)
	}
}
