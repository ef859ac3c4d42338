package server_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// cannedSSE is an OpenAI chat stream of n text chunks of size bytes each, as the mock sends
// make bench's answer: the upstream of BenchmarkChatHandler, written at once.
func cannedSSE(n, size int) []byte {
	var b bytes.Buffer
	const pre = `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1727346168,"model":"mock","choices":[{"index":0,`
	b.WriteString(pre + `"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n")
	for range n {
		fmt.Fprintf(&b, pre+`"delta":{"content":%q},"finish_reason":null}]}`+"\n\n", strings.Repeat("x", size))
	}
	b.WriteString(pre + `"delta":{},"finish_reason":"stop"}]}` + "\n\n")
	b.WriteString(`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1727346168,"model":"mock","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":20,"total_tokens":29}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// discard is a ResponseWriter that keeps the status and counts the body: the client side of
// BenchmarkChatHandler, which allocates nothing per request but its header map's entries.
type discard struct {
	h      http.Header
	status int
	n      int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(code int)        { d.status = code }
func (d *discard) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }
func (d *discard) Flush()                      {}

// BenchmarkChatHandler is one plain (non-streamed) chat request through the gateway's
// handler, called directly, against an httptest upstream that writes a canned stream (20
// chunks of 10 bytes, make bench's answer; 100 of 20, the 500-token answer) at once: its
// allocs/op and B/op are the gateway's own per request plus the upstream call's transport,
// without a client connection or a mock that allocates, so they do not depend on the load of
// the machine. Profile with -memprofile and go tool pprof -sample_index=alloc_objects.
func BenchmarkChatHandler(b *testing.B) {
	for _, c := range []struct {
		name        string
		chunks, len int
	}{{"short", 20, 10}, {"long", 100, 20}} {
		body := cannedSSE(c.chunks, c.len)
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write(body)
		}))
		srv := benchServerTarget(b, up.URL, "mock/bench", "")
		for _, stream := range []bool{false, true} {
			name := c.name + "/nonstream"
			req := `{"model":"default","messages":[{"role":"user","content":"hi"}]}`
			if stream {
				name = c.name + "/stream"
				req = `{"model":"default","stream":true,"messages":[{"role":"user","content":"hi"}]}`
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				w := &discard{h: http.Header{}}
				for b.Loop() {
					clear(w.h)
					w.status, w.n = 0, 0
					r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(req))
					r.Header.Set("Content-Type", "application/json")
					srv.ServeHTTP(w, r)
					if w.status != http.StatusOK && w.status != 0 || w.n < c.chunks*c.len {
						b.Fatalf("status %d, %d bytes", w.status, w.n)
					}
				}
			})
		}
		up.Close()
	}
}
