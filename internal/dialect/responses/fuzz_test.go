package responses

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/sse"
)

// Any body decodes, or fails with a 400 invalid_request_error: never a panic, never another
// kind.
func FuzzDecodeResponses(f *testing.F) {
	f.Add(`{"model":"m","input":"hi"}`)
	f.Add(`{"model":"m","input":[{"type":"reasoning","summary":[]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}]}`)
	f.Add(`{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"x"}]}],"text":{"format":{"type":"json_schema","name":"n","schema":{}}}}`)
	f.Add(`{"model":"m","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"f"},"previous_response_id":"r"}`)
	f.Add(`{"model":"m","input":[{"type":"custom_tool_call","call_id":"c","name":"p","input":"x"},{"type":"custom_tool_call_output","call_id":"c","output":"ok"},{"type":"function_call","namespace":"n","call_id":"d","name":"f","arguments":"{}"},{"type":"web_search_call"}],"tools":[{"type":"namespace","name":"n","tools":[{"type":"function","name":"f"}]},{"type":"custom","name":"p","format":{"type":"grammar","syntax":"lark","definition":"s"}},{"type":"web_search"}],"tool_choice":{"type":"custom","name":"p"},"client_metadata":{"a":"b"}}`)
	f.Add(`{"model":"m","input":[{"role":"user","content":[{"type":"input_file","filename":"a.pdf","file_data":"data:application/pdf;base64,JVBERi0="},{"type":"input_file","file_url":"https://x/b.pdf"},{"type":"input_file","file_id":"file-1"},{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}]}]}`)
	f.Add(`{"model":"m","user":"u","prompt_cache_key":"k","input":[{"type":"reasoning","summary":[],"encrypted_content":"gAAAAABx"},{"type":"reasoning","summary":[],"encrypted_content":"Eq"},{"role":"assistant","content":"a"}]}`)
	if b, err := os.ReadFile("testdata/codex-0.169.0.json"); err == nil {
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, body string) {
		rr, err := Decode([]byte(body))
		if err != nil {
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != llm.Invalid {
				t.Fatalf("%q: got %v, want an Invalid *llm.Error", body, err)
			}
			return
		}
		r := &rr.Req
		if r.PromptCacheKey != "" && r.Session != r.PromptCacheKey || r.PromptCacheKey == "" && r.Session != r.User {
			t.Fatalf("%q: session %q, want the prompt_cache_key %q, else the user %q", body, r.Session, r.PromptCacheKey, r.User)
		}
		for _, m := range r.Messages {
			for _, x := range m.Reasoning {
				if x.Wire != "" && x.Wire != "responses" || openAIEncrypted(x.Encrypted) {
					t.Fatalf("%q: reasoning %+v: OpenAI's content in the request, or another wire", body, x)
				}
			}
		}
		// The native body is the body's members: each one JSON.
		for _, m := range rr.Req.Native.Fields {
			if !json.Valid(m.Value) {
				t.Fatalf("%q: native member %s is %q, want JSON", body, m.Name, m.Value)
			}
		}
		// What is echoed goes on one SSE line, and is JSON.
		for _, raw := range [][]byte{rr.echo.Tools, rr.echo.Text, rr.echo.ToolChoice, rr.echo.Reasoning, rr.Req.Metadata, rr.Req.ToolChoice, rr.Req.ResponseFormat} {
			if raw != nil && (!json.Valid(raw) || strings.ContainsAny(string(raw), "\r\n")) {
				t.Fatalf("%q: got %q, want compact JSON", body, raw)
			}
		}
	})
}

// Whatever order events come in, the sink writes well-formed frames with consecutive
// sequence numbers, and its final Response holds the text the deltas carried.
func FuzzResponsesSink(f *testing.F) {
	f.Add([]byte{0, 0, 1, 2, 3, 5})
	f.Add([]byte{2, 2, 0, 1, 0, 4, 4, 5})
	f.Add([]byte{0, 8, 6, 7, 4, 5})
	f.Fuzz(func(t *testing.T, script []byte) {
		rec := httptest.NewRecorder()
		ew := sse.NewWriter(rec, sse.WriterOptions{})
		defer ew.Close()
		meta := &respMeta{id: "resp_x", model: "m", echo: &respEcho{Encrypted: true,
			refs: map[string]toolRef{"n__f": {name: "f", namespace: "n"}, "p": {name: "p", custom: true}}}}
		s := newStream(ew, meta, "x")
		if err := s.begin(); err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		for i, op := range script {
			var ev llm.Event
			switch op % 9 {
			case 0:
				ev = llm.Event{Type: llm.EvText, Text: "t\n\"" + string(rune('a'+i%26))}
				text.WriteString(ev.Text)
			case 1:
				ev = llm.Event{Type: llm.EvRefusal, Text: "no"}
			case 2:
				ev = llm.Event{Type: llm.EvReasoning, Text: "r"}
			case 3:
				ev = llm.Event{Type: llm.EvReasoning, Encrypted: "enc"}
			case 4:
				ev = llm.Event{Type: llm.EvToolCall, Tool: llm.ToolDelta{Index: i, ID: "c", Name: "f", Args: `{"a":1}`}}
			case 5:
				ev = llm.Event{Type: llm.EvDone, Finish: []string{"stop", "length", "tool_calls"}[i%3]}
			case 6:
				ev = llm.Event{Type: llm.EvToolCall, Tool: llm.ToolDelta{Index: i, ID: "c", Name: "p", Args: `{"input":"a\nb"}`}}
			case 7:
				ev = llm.Event{Type: llm.EvToolCall, Tool: llm.ToolDelta{Index: i, ID: "c", Name: "n__f", Args: `{}`}}
			case 8:
				ev = llm.Event{Type: llm.EvItem, Tool: llm.ToolDelta{Index: i}, Raw: json.RawMessage(`{"id":"ws","type":"web_search_call"}`)}
			}
			if err := s.Event(&ev); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.end(&llm.Usage{}); err != nil {
			t.Fatal(err)
		}
		frames := strings.Split(strings.TrimSuffix(rec.Body.String(), "\n\n"), "\n\n")
		var deltas strings.Builder
		var last map[string]any
		for i, fr := range frames {
			typ, data, ok := strings.Cut(strings.TrimPrefix(fr, "event: "), "\ndata: ")
			var m map[string]any
			if !ok || strings.Contains(data, "\n") || json.Unmarshal([]byte(data), &m) != nil || m["type"] != typ ||
				m["sequence_number"] != float64(i) {
				t.Fatalf("frame %d is malformed: %q", i, fr)
			}
			if typ == "response.output_text.delta" {
				deltas.WriteString(m["delta"].(string))
			}
			last = m
		}
		if deltas.String() != text.String() {
			t.Errorf("got deltas %q, want %q", deltas.String(), text.String())
		}
		var out strings.Builder
		for _, it := range last["response"].(map[string]any)["output"].([]any) {
			content, _ := it.(map[string]any)["content"].([]any) // messages only
			for _, p := range content {
				if s, ok := p.(map[string]any)["text"].(string); ok {
					out.WriteString(s)
				}
			}
		}
		if out.String() != text.String() {
			t.Errorf("got output text %q, want %q", out.String(), text.String())
		}
	})
}
