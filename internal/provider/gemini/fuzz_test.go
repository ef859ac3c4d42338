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
	// A thought, a signature on a text part and on a call, cache reads (issue 46).
	f.Add([]byte(`data: {"candidates":[{"content":{"parts":[{"text":"t","thought":true},{"text":"a","thoughtSignature":"Cq4B+/=="},` +
		`{"functionCall":{"id":"c1","name":"f","args":{}},"thoughtSignature":""}]},"finishReason":"STOP","index":0}],` +
		`"usageMetadata":{"promptTokenCount":9,"cachedContentTokenCount":12}}` + "\r\n\r\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		s := newStream(context.Background(), origin{name: "gemini"}, 2, io.NopCloser(bytes.NewReader(body)))
		defer s.Close()
		providertest.WellEnded(t, s, len(body)+2)
	})
}
