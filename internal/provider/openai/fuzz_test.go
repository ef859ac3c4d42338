package openai

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

// FuzzStream feeds arbitrary bodies to the stream: it never panics, always ends, ends with
// io.EOF or an *llm.Error, and io.EOF only after a finish reason.
func FuzzStream(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(roleChunk + textChunk + finishChunk))
	f.Add([]byte(roleChunk + `data: {"choices":[{"index":3,"delta":{"content":["x"]},"finish_reason":"stop"}]}{}` + "\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		s := newStream(context.Background(), origin{name: "openai"}, io.NopCloser(bytes.NewReader(body)))
		defer s.Close()
		finished := false
		for range len(body) + 2 {
			ev, err := s.Recv()
			if err == io.EOF {
				if !finished {
					t.Fatal("got io.EOF before any finish reason")
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
			if ev.Type == llm.EvDone {
				finished = true
			}
		}
		// Events per byte of body are bounded only loosely; give generous room before
		// calling it a hang.
		for range 1 << 16 {
			if _, err := s.Recv(); err != nil {
				return
			}
		}
		t.Fatal("stream did not end")
	})
}
