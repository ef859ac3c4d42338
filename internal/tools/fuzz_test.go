package tools

import (
	"bufio"
	"bytes"
	"io"
	"testing"

	"github.com/sluice-gw/sluice/internal/sse"
)

// FuzzEvents feeds any bytes to the streamed-answer reader, as SSE and as NDJSON: it never
// panics, and it ends with a result, io.EOF after one, or an error, in a bounded number of
// events.
func FuzzEvents(f *testing.F) {
	f.Add([]byte("data: {\"kind\":\"progress\",\"done\":1}\n\ndata: {\"kind\":\"result\",\"output\":1}\n\n"))
	f.Add([]byte(`{"kind":"progress","total":2}` + "\n" + `{"kind":"error","message":"x"}`))
	f.Add([]byte("event: result\ndata: {\"output\":[1,2]}\n\n: ping\n"))
	f.Add([]byte(`{"kind":"result"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, fr := range []frames{sseFrames{sse.NewReader(bytes.NewReader(b), 1<<16)}, ndjsonFrames{bufio.NewReaderSize(bytes.NewReader(b), 1<<16)}} {
			c := &streamCall{body: io.NopCloser(nil), f: fr}
			for i := 0; ; i++ {
				if i > len(b)+1 {
					t.Fatalf("more events than bytes in %q", b)
				}
				ev, err := c.Recv()
				if err != nil {
					break
				}
				if ev.progress == nil && ev.output == nil {
					t.Fatalf("an event with neither progress nor output from %q", b)
				}
			}
		}
	})
}
