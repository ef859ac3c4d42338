package anthropic

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/sse"
)

// The stream of a round with every kind of block: a signed thinking block, a redacted one
// (opaque reasoning with no text before it), text, a tool call; usage with the cache's
// tokens, which Anthropic leaves out of input_tokens.
func TestWireStream(t *testing.T) {
	rec := httptest.NewRecorder()
	ew := sse.NewWriter(rec, sse.WriterOptions{})
	w := NewWire("msg_1")
	sink, err := w.Open(ew, "claude-x")
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []llm.Event{
		{Type: llm.EvStart, ID: "up", Model: "m"},
		{Type: llm.EvReasoning, Text: "hm"},
		{Type: llm.EvReasoning, Encrypted: "sig"},
		{Type: llm.EvReasoning, Encrypted: "opaque", Redacted: true},
		{Type: llm.EvText, Text: "hi"},
		{Type: llm.EvUsage, Usage: &llm.Usage{PromptTokens: 100}},
		{Type: llm.EvToolCall, Tool: llm.ToolDelta{ID: "toolu_1", Name: "Bash", Args: "{\"command\": \"ls\"}"}},
		{Type: llm.EvDone, Finish: "tool_calls"},
		{Type: llm.EvText, Choice: 1, Text: "another choice"},
	} {
		if err := sink.Event(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.End(&llm.Usage{PromptTokens: 100, CachedTokens: 60, CacheWriteTokens: 30, CacheWrite1hTokens: 20, CompletionTokens: 7}); err != nil {
		t.Fatal(err)
	}
	ew.Close()
	var types []string
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			types = append(types, d)
		}
	}
	want := []string{
		`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"opaque"}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"hi"}}`,
		`{"type":"content_block_stop","index":2}`,
		`{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}}`,
		`{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"command\":\"ls\"}"}}`,
		`{"type":"content_block_stop","index":3}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"input_tokens":10,"cache_creation_input_tokens":30,"cache_read_input_tokens":60,"cache_creation":{"ephemeral_5m_input_tokens":10,"ephemeral_1h_input_tokens":20},"output_tokens":7}}`,
		`{"type":"message_stop"}`,
	}
	if strings.Join(types, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(types, "\n"), strings.Join(want, "\n"))
	}
}

// The non-streamed Message: thinking, text, tool calls, in that order, and the stop reason.
func TestWireBody(t *testing.T) {
	resp := &llm.Response{Usage: llm.Usage{PromptTokens: 5, CompletionTokens: 2}, Choices: []llm.Choice{{
		Text: "hi", Finish: "length", Opaque: []llm.Reasoning{{Text: "t", Encrypted: "s"}, {Encrypted: "o", Redacted: true}},
		ToolCalls: []llm.ToolCall{{ID: "a", Name: "f", Arguments: "{\"x\":1"}}, // cut by max_tokens
	}}}
	got := string(NewWire("msg_1").Body("m", resp))
	want := `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"thinking","thinking":"t","signature":"s"},` +
		`{"type":"redacted_thinking","data":"o"},{"type":"text","text":"hi"},{"type":"tool_use","id":"a","name":"f","input":{}}],` +
		`"stop_reason":"max_tokens","stop_sequence":null,"usage":{"input_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2}}`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestWireOmittedThinking (issue 46): with thinking display "omitted" (Claude Code's
// default), Anthropic's thinking block has no text and a signature; the client must get it
// back as a thinking block, streamed and not, never as redacted_thinking whose data is the
// signature, which its next turn would hand back to the API.
func TestWireOmittedThinking(t *testing.T) {
	rec := httptest.NewRecorder()
	sink, err := NewWire("msg_1").Open(sse.NewWriter(rec, sse.WriterOptions{}), "claude-x")
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []llm.Event{
		{Type: llm.EvReasoning, Encrypted: "EqMBsig"},
		{Type: llm.EvText, Text: "hi"},
		{Type: llm.EvDone, Finish: "stop"},
	} {
		if err := sink.Event(&ev); err != nil {
			t.Fatal(err)
		}
	}
	got := rec.Body.String()
	if !strings.Contains(got, `"content_block":{"type":"thinking","thinking":"","signature":""}`) ||
		!strings.Contains(got, `"delta":{"type":"signature_delta","signature":"EqMBsig"}`) || strings.Contains(got, "redacted_thinking") {
		t.Errorf("streamed: got\n%s\nwant a thinking block closed by the signature", got)
	}
	body := string(NewWire("msg_1").Body("m", &llm.Response{Choices: []llm.Choice{{Text: "hi", Opaque: []llm.Reasoning{{Encrypted: "EqMBsig"}}}}}))
	if !strings.Contains(body, `{"type":"thinking","thinking":"","signature":"EqMBsig"}`) {
		t.Errorf("plain: got %s, want a thinking block with the signature", body)
	}
}

func TestError(t *testing.T) {
	tests := []struct {
		err        error
		overloaded bool
		status     int
		typ        string
	}{
		{&llm.Error{Kind: llm.Invalid, Message: "bad"}, false, 400, "invalid_request_error"},
		{&llm.Error{Kind: llm.Unauthenticated, Message: "no key"}, false, 401, "authentication_error"},
		{&llm.Error{Kind: llm.Invalid, Status: 403, Message: "not yours"}, false, 403, "permission_error"},
		{&llm.Error{Kind: llm.NotFound, Message: "no model"}, false, 404, "not_found_error"},
		{&llm.Error{Kind: llm.TooLarge, Message: "big"}, false, 413, "request_too_large"},
		{&llm.Error{Kind: llm.RateLimited, Message: "slow"}, false, 429, "rate_limit_error"},
		{errors.New("a bug"), false, 500, "api_error"},
		{&llm.Error{Kind: llm.Unavailable, Message: "all failed"}, false, 502, "api_error"},
		{&llm.Error{Kind: llm.Unavailable, Message: "all overloaded"}, true, 529, "overloaded_error"},
	}
	for _, tt := range tests {
		status, body := Error(tt.err, tt.overloaded)
		if status != tt.status || !strings.HasPrefix(string(body), `{"type":"error","error":{"type":"`+tt.typ+`","message":"`) {
			t.Errorf("%v: got %d %s, want %d %s", tt.err, status, body, tt.status, tt.typ)
		}
	}
	if !strings.Contains(string(ErrorBody(errors.New("secret sk-123"), "api_error")), "The gateway failed") {
		t.Errorf("a bug's text must not reach the client")
	}
}

// An Anthropic upstream's own stop reason (stop_sequence, pause_turn) and the matched
// sequence come back as they came, where the Chat finish reason would say end_turn.
func TestWireStopReason(t *testing.T) {
	resp := &llm.Response{Choices: []llm.Choice{{Text: "a", Finish: "stop", Stop: "stop_sequence", StopSequence: "END"}}}
	if got := string(NewWire("msg_1").Body("m", resp)); !strings.Contains(got, `"stop_reason":"stop_sequence","stop_sequence":"END"`) {
		t.Errorf("body: got %s", got)
	}
	resp.Choices[0] = llm.Choice{Text: "a", Finish: "stop", Stop: "pause_turn"}
	if got := string(NewWire("msg_1").Body("m", resp)); !strings.Contains(got, `"stop_reason":"pause_turn","stop_sequence":null`) {
		t.Errorf("body: got %s", got)
	}
	resp.Choices[0] = llm.Choice{Text: "a", Finish: "stop"} // a Chat upstream
	if got := string(NewWire("msg_1").Body("m", resp)); !strings.Contains(got, `"stop_reason":"end_turn"`) {
		t.Errorf("body: got %s", got)
	}
}
