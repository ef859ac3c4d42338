package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// FuzzResponsesStream feeds arbitrary bodies to the Responses stream: it never panics,
// always ends, ends with io.EOF or an *llm.Error, io.EOF only after a finish, and sends
// encrypted reasoning only when asked.
func FuzzResponsesStream(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "openai-responses-*.sse"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, true)
		}
	}
	f.Add([]byte(respCreated+fcAdded+fcDone+respCompleted), false)
	f.Add([]byte(rev("response.function_call_arguments.delta", `"delta":"{"`)+rev("response.output_item.done", `"item":{"type":"reasoning","encrypted_content":"x","summary":[{"text":"s"}]}`)+respCompleted), true)
	f.Add([]byte("event: error\ndata: {\"error\":\"text\"}\n\n"), false)
	f.Add([]byte(respCreated+rev("response.output_item.done", `"item":{"type":"web_search_call","id":"ws_1"}`)+
		rev("response.output_item.added", `"item":{"type":"custom_tool_call","id":"c","call_id":"k","name":"p"}`)+
		rev("response.output_item.done", `"item":{"type":"custom_tool_call","id":"c","call_id":"k","name":"p","input":"x"}`)+
		rev("response.output_item.done", `"item":{"type":"function_call","id":"f","call_id":"j","name":"s","namespace":"n","arguments":"{}"}`)+respCompleted), false)
	f.Fuzz(func(t *testing.T, body []byte, encrypted bool) {
		s := newResponsesStream(context.Background(), origin{name: "openai"}, io.NopCloser(bytes.NewReader(body)), encrypted)
		defer s.Close()
		finished := false
		for range len(body) + 2 {
			ev, err := s.Recv()
			if err == io.EOF {
				if !finished {
					t.Fatal("got io.EOF before a finish")
				}
				return
			}
			if err != nil {
				var le *llm.Error
				if !errors.As(err, &le) || le.Kind == llm.KindNone {
					t.Fatalf("got %v (%T), want an *llm.Error with a kind", err, err)
				}
				return
			}
			switch {
			case ev.Type < llm.EvStart || ev.Type > llm.EvItem:
				t.Fatalf("got event type %d", ev.Type)
			case ev.Type == llm.EvItem && (!json.Valid(ev.Raw) || bytes.ContainsAny(ev.Raw, "\r\n")):
				t.Fatalf("got item %q, want compact JSON", ev.Raw)
			case ev.Choice != 0 || ev.Tool.Index < 0:
				t.Fatalf("got choice %d tool index %d, want 0 and >= 0", ev.Choice, ev.Tool.Index)
			case ev.Encrypted != "" && !encrypted:
				t.Fatal("got encrypted reasoning the client did not ask for")
			case ev.Type == llm.EvDone:
				finished = true
			}
		}
		// An event can yield a few llm events (usage and done, a call's id and arguments):
		// give room before calling it a hang.
		for range 1 << 16 {
			if _, err := s.Recv(); err != nil {
				return
			}
		}
		t.Fatal("stream did not end")
	})
}

// BenchmarkResponsesRecv decodes a 10,000-delta text answer shaped like OpenAI's (event
// lines, sequence numbers, obfuscation) per op.
func BenchmarkResponsesRecv(b *testing.B) {
	var body bytes.Buffer
	body.WriteString(respCreated)
	for i := range 10_000 {
		fmt.Fprintf(&body, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":%d,"+
			"\"item_id\":\"msg_0fabc13af1ee0049006a691dfebdc881a1ae18d027c313d8ce\",\"output_index\":0,\"content_index\":0,"+
			"\"delta\":\" token%d\",\"logprobs\":[],\"obfuscation\":\"RvoJ43TaUvnCS8e\"}\n\n", i+1, i%1000)
	}
	body.WriteString(respCompleted)
	b.SetBytes(int64(body.Len()))
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		s := newResponsesStream(context.Background(), origin{name: "openai"}, io.NopCloser(bytes.NewReader(body.Bytes())), false)
		for {
			_, err := s.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			events++
		}
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

var _ llm.Stream = (*respStream)(nil)
