package anthropic

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"
	"testing/iotest"

	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// countingReader counts the reads of its source.
type countingReader struct {
	src   io.Reader
	reads int
}

func (c *countingReader) Read(b []byte) (int, error) {
	c.reads++
	return c.src.Read(b)
}

// The BeforeWait hook runs before every read of the body, and once more before the drain
// that follows message_stop, so nothing the server wrote waits while the gateway reads.
func TestBeforeWait(t *testing.T) {
	body, err := os.ReadFile("testdata/anthropic-text.sse")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		src  io.Reader
	}{{"whole", &countingReader{src: iotest.HalfReader(bytes.NewReader(body))}}, {"one byte", &countingReader{src: iotest.OneByteReader(bytes.NewReader(body))}}} {
		src := tc.src.(*countingReader)
		s := newStream(context.Background(), origin{name: "anthropic"}, io.NopCloser(src))
		hooks := 0
		s.BeforeWait(func() {
			hooks++
			if hooks > src.reads+1 {
				t.Errorf("%s: hook %d after %d reads, want one before each", tc.name, hooks, src.reads)
			}
		})
		if _, err := providertest.Drain(t, s); err != io.EOF {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if hooks < src.reads || hooks > src.reads+1 || hooks < 2 {
			t.Errorf("%s: %d hooks for %d reads of the body, want one before each and one before the drain", tc.name, hooks, src.reads)
		}
	}
}
