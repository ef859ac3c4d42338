package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// FuzzStream feeds arbitrary bodies to the stream decoder: it never panics, always ends,
// ends with io.EOF or an *llm.Error with a kind, and io.EOF only right after a finish.
func FuzzStream(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(msgStart + textStart + textDelta + blockStop + msgDelta + msgStop))
	f.Add([]byte(msgStart + toolStart(1, "t", "f") + jsonDelta(1, `{"a`) + msgStop[:20]))
	f.Add([]byte("\n\n\r\r\r\n\r\n:\n\ndata\n\nevent: error\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		s := newStream(context.Background(), origin{name: "anthropic"}, io.NopCloser(bytes.NewReader(body)))
		defer s.Close()
		var last llm.EventType
		for range len(body) + 2 {
			ev, err := s.Recv()
			if err == io.EOF {
				if last != llm.EvDone {
					t.Fatalf("got io.EOF after %v, want it right after the finish", last)
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
			if ev.Type < llm.EvStart || ev.Type > llm.EvDone {
				t.Fatalf("got event type %d", ev.Type)
			}
			if ev.Type == llm.EvToolCall && ev.Tool.Index < 0 {
				t.Fatalf("got tool index %d", ev.Tool.Index)
			}
			last = ev.Type
		}
		t.Fatal("stream did not end: more events than bytes")
	})
}

// FuzzNativeCache feeds Messages bodies to the native path: it never panics; a body it
// rewrites has at most llm.MaxCacheMarks markers left, and as many fewer as it says it
// removed.
func FuzzNativeCache(f *testing.F) {
	cc := `"cache_control":{"type":"ephemeral"}`
	f.Add(`{"model":"m","tools":[{"name":"a",` + cc + `}],"system":[{"type":"text","text":"s",` + cc + `}],"messages":[{"role":"user","content":[{"type":"text","text":"q",` + cc + `},{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"r",` + cc + `}],` + cc + `}]}]}`)
	f.Add(`{"messages":[{"role":"user","content":"\"cache_control\"\"cache_control\"\"cache_control\"\"cache_control\"\"cache_control\""}]}`)
	f.Add(`{"system":"s","messages":[{"content":[1,null,{"cache_control":null},{"cache_control":1},{"cache_control":{}},{"cache_control":[]},{"cache_control":""}]}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		out, dropped, err := nativeBody(json.RawMessage(body), "m")
		if err != nil {
			return
		}
		count := func(b []byte) int {
			var m map[string]json.RawMessage
			if json.Unmarshal(b, &m) != nil {
				return -1
			}
			var marks int
			var walk func(v any)
			walk = func(v any) {
				list, _ := v.([]any)
				for _, b := range list {
					if o, ok := b.(map[string]any); ok {
						walk(o["content"])
						if c, ok := o["cache_control"]; ok && c != nil {
							marks++
						}
					}
				}
			}
			for _, k := range []string{"tools", "system"} {
				var v any
				json.Unmarshal(m[k], &v)
				walk(v)
			}
			var msgs []map[string]any
			json.Unmarshal(m["messages"], &msgs)
			for _, msg := range msgs {
				walk(msg["content"])
			}
			return marks
		}
		before, after := count([]byte(body)), count(out)
		if before < 0 {
			return
		}
		// A key written with escapes ("cache_\u0063ontrol") is not counted, and not trimmed.
		plain := bytes.Count([]byte(body), ccKey) >= before
		if dropped < 0 || after > before-dropped || plain && after > llm.MaxCacheMarks {
			t.Fatalf("%s: %d markers, dropped %d, %d left", body, before, dropped, after)
		}
	})
}
