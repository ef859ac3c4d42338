package gemini

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/sse"
)

func TestWireStream(t *testing.T) {
	for _, c := range []struct {
		name string
		sse  bool
		want string
	}{
		{"sse", true, `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hi <b>"}]},"index":0}],"modelVersion":"m","responseId":"r1"}` + "\r\n\r\n" +
			`data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"call_1","name":"f","args":{"a":1}},"thoughtSignature":"sig"}]},"index":0}],"modelVersion":"m","responseId":"r1"}` + "\r\n\r\n" +
			`data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"g","args":{}}}]},"index":0}],"modelVersion":"m","responseId":"r1"}` + "\r\n\r\n" +
			`data: {"candidates":[{"finishReason":"MAX_TOKENS","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":4,"totalTokenCount":9,"thoughtsTokenCount":2},"modelVersion":"m","responseId":"r1"}` + "\r\n\r\n"},
		{"array", false, `[{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi <b>"}]},"index":0}],"modelVersion":"m","responseId":"r1"},` + "\r\n" +
			`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"call_1","name":"f","args":{"a":1}},"thoughtSignature":"sig"}]},"index":0}],"modelVersion":"m","responseId":"r1"},` + "\r\n" +
			`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"g","args":{}}}]},"index":0}],"modelVersion":"m","responseId":"r1"},` + "\r\n" +
			`{"candidates":[{"finishReason":"MAX_TOKENS","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":4,"totalTokenCount":9,"thoughtsTokenCount":2},"modelVersion":"m","responseId":"r1"}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			ew := sse.NewWriter(rec, sse.WriterOptions{})
			w := NewWire("r1", c.sse, false)
			sink, err := w.Open(ew, "m")
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range []llm.Event{
				{Type: llm.EvStart},
				{Type: llm.EvText, Text: "Hi <b>"},
				{Type: llm.EvReasoning, Text: "not asked for"},
				{Type: llm.EvToolCall, Tool: llm.ToolDelta{ID: "call_1", Name: "f", Args: `{ "a": 1 }`}},
				{Type: llm.EvReasoning, Encrypted: "sig", ID: "call_1"},
				{Type: llm.EvToolCall, Tool: llm.ToolDelta{Index: 1, ID: SyntheticID + "x", Name: "g", Args: `{"cut`}},
				{Type: llm.EvText, Choice: 1, Text: "another choice"},
				{Type: llm.EvDone, Finish: "length"},
			} {
				if err := sink.Event(&ev); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.End(&llm.Usage{PromptTokens: 3, CompletionTokens: 6, ReasoningTokens: 2}); err != nil {
				t.Fatal(err)
			}
			if got := rec.Body.String(); got != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
			if !c.sse {
				var v []any
				if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
					t.Errorf("not a JSON array: %v", err)
				}
			}
		})
	}
}

// TestWireFailBeforeOpen: a failure after a keepalive sent the headers, before the stream
// opened, is still a whole JSON array (or one SSE event) holding Google's error.
func TestWireFailBeforeOpen(t *testing.T) {
	err := &llm.Error{Kind: llm.RateLimited, Message: "slow down"}
	for _, sseMode := range []bool{true, false} {
		rec := httptest.NewRecorder()
		ew := sse.NewWriter(rec, sse.WriterOptions{})
		if e := NewWire("r1", sseMode, false).Fail(ew, err); e != nil {
			t.Fatal(e)
		}
		body := strings.TrimPrefix(strings.TrimSuffix(rec.Body.String(), "\r\n\r\n"), "data: ")
		var v any
		if !sseMode {
			var arr []json.RawMessage
			if json.Unmarshal([]byte(body), &arr) != nil || len(arr) != 1 {
				t.Fatalf("array mode: got %q, want one error element", body)
			}
			body = string(arr[0])
		}
		if json.Unmarshal([]byte(body), &v) != nil || !strings.Contains(body, `"code":429`) || !strings.Contains(body, `"RESOURCE_EXHAUSTED"`) {
			t.Errorf("sse %v: got %q, want Google's 429", sseMode, rec.Body.String())
		}
	}
}

func TestWireEndNotOpen(t *testing.T) {
	if err := NewWire("r", true, false).End(&llm.Usage{}); !errors.Is(err, errNotOpen()) {
		t.Errorf("got %v, want ErrNotOpen", err)
	}
}

func errNotOpen() error { return dialect.ErrNotOpen }
