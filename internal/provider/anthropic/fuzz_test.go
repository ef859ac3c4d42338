package anthropic

import (
	"bytes"
	"context"
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
