package gemini

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// FuzzStream feeds arbitrary bodies to the chunk decoder: it never panics, always ends, and
// ends with io.EOF right after a finish or an *llm.Error with a kind.
func FuzzStream(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.chunks.txt"))
	for _, p := range files {
		f.Add([]byte(sseBody(f, p)))
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b) // unframed: no event ever ends
		}
	}
	f.Add([]byte("data: {\"candidates\":[{\"index\":0,\"finishReason\":\"STOP\"}]}\n\n"))
	f.Add([]byte("data: {\"candidates\":[{\"index\":1}]}\r\n\r\n:\r\n\r\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		s := newStream(context.Background(), origin{name: "gemini"}, 2, io.NopCloser(bytes.NewReader(body)))
		defer s.Close()
		providertest.WellEnded(t, s, len(body)+2)
	})
}
