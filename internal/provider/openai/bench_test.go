package openai

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/sse"
)

// recordedLike is a stream shaped like openai-chat-text.sse, with n content chunks.
func recordedLike(n int) []byte {
	var b bytes.Buffer
	const pre = `data: {"id":"chatcmpl-ABfw031mOJeYCSHe4yI2ZjOA6kMJL","object":"chat.completion.chunk","created":1727346168,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_5050236cbd","choices":[{"index":0,`
	b.WriteString(pre + `"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	for i := range n {
		fmt.Fprintf(&b, pre+`"delta":{"content":" token%d"},"logprobs":null,"finish_reason":null}]}`+"\n\n", i%1000)
	}
	b.WriteString(pre + `"delta":{},"logprobs":null,"finish_reason":"stop"}]}` + "\n\n")
	b.WriteString(`data: {"id":"chatcmpl-ABfw031mOJeYCSHe4yI2ZjOA6kMJL","object":"chat.completion.chunk","created":1727346168,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_5050236cbd","choices":[],"usage":{"prompt_tokens":14,"completion_tokens":30,"total_tokens":44,"completion_tokens_details":{"reasoning_tokens":0}}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// BenchmarkRecv decodes a 10,000-chunk stream per op; allocs/op divided by 10,000 is the
// cost per chunk.
func BenchmarkRecv(b *testing.B) {
	const chunks = 10_000
	body := recordedLike(chunks)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		s := newStream(context.Background(), origin{name: "openai"}, io.NopCloser(bytes.NewReader(body)))
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

// BenchmarkSSE is the framing alone, for comparison with BenchmarkRecv.
func BenchmarkSSE(b *testing.B) {
	body := recordedLike(10_000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		d := sse.NewReader(bytes.NewReader(body), 0)
		for {
			if _, err := d.Next(); err != nil {
				break
			}
		}
	}
}

var _ llm.Stream = (*stream)(nil)

// BenchmarkAnswer decodes one 500-token answer (100 chunks of about 5 tokens) per op, as a
// stream and as the plain body of the same answer (upstream: plain): the adapter's share of
// what a non-streamed request costs each way.
func BenchmarkAnswer(b *testing.B) {
	const chunks = 100
	text := strings.Repeat(" token", 5*chunks)
	plain := []byte(`{"id":"chatcmpl-ABfw031mOJeYCSHe4yI2ZjOA6kMJL","object":"chat.completion","created":1727346168,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_5050236cbd","choices":[{"index":0,"message":{"role":"assistant","content":"` +
		text + `","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":14,"completion_tokens":500,"total_tokens":514,"completion_tokens_details":{"reasoning_tokens":0}}}`)
	var streamed bytes.Buffer
	const pre = `data: {"id":"chatcmpl-ABfw031mOJeYCSHe4yI2ZjOA6kMJL","object":"chat.completion.chunk","created":1727346168,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_5050236cbd","choices":[{"index":0,`
	streamed.WriteString(pre + `"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	for range chunks {
		streamed.WriteString(pre + `"delta":{"content":"` + strings.Repeat(" token", 5) + `"},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	}
	streamed.WriteString(pre + `"delta":{},"logprobs":null,"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
	for _, c := range []struct {
		name string
		body []byte
		open func(io.ReadCloser) llm.Stream
	}{
		{"stream", streamed.Bytes(), func(rc io.ReadCloser) llm.Stream { return newStream(context.Background(), origin{name: "openai"}, rc) }},
		{"plain", plain, func(rc io.ReadCloser) llm.Stream {
			return newPlainStream(context.Background(), origin{name: "openai"}, rc)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			cpu0 := cpuTime()
			defer func() { b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op") }()
			for b.Loop() {
				s := c.open(io.NopCloser(bytes.NewReader(c.body)))
				var got int
				for {
					ev, err := s.Recv()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					got += len(ev.Text)
				}
				if got != len(text) {
					b.Fatalf("got %d bytes of text, want %d", got, len(text))
				}
			}
		})
	}
}

// cpuTime is the process's user and system time so far: unlike ns/op, other processes on the
// machine do not inflate it.
func cpuTime() time.Duration {
	var u syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
