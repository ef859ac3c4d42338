package chat_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/dialect/chat"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/sse"
)

// A streamed answer: the role chunk, one chunk per event, the usage chunk when asked, [DONE].
func TestWireStream(t *testing.T) {
	rec := httptest.NewRecorder()
	ew := sse.NewWriter(rec, sse.WriterOptions{})
	_ = ew.Start(func(http.Header) {})
	w := chat.NewWire("chatcmpl-1", 7, true)
	s, err := w.Open(ew, "m")
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []llm.Event{{Type: llm.EvText, Text: "Hi"}, {Type: llm.EvUsage, Usage: &llm.Usage{PromptTokens: 1}},
		{Type: llm.EvDone, Finish: "stop"}} {
		if err := s.Event(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.End(&llm.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}); err != nil {
		t.Fatal(err)
	}
	ew.Close()
	head := `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"m","choices":[`
	want := head + `{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n" +
		head + `{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}` + "\n\n" +
		head + `{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}` + "\n\n" +
		head + `],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}` + "\n\n" +
		"data: [DONE]\n\n"
	if got := rec.Body.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// A failure in-band is one data frame with the OpenAI error body and no [DONE] after it; a
// bug's text stays out of it.
func TestWireFail(t *testing.T) {
	rec := httptest.NewRecorder()
	ew := sse.NewWriter(rec, sse.WriterOptions{})
	w := chat.NewWire("chatcmpl-1", 7, false)
	if err := w.Fail(ew, errors.New("secret internals")); err != nil {
		t.Fatal(err)
	}
	ew.Close()
	got := rec.Body.String()
	if !strings.HasPrefix(got, `data: {"error":{"message":"The gateway failed`) || strings.Contains(got, "secret") ||
		strings.Contains(got, "[DONE]") || !strings.HasSuffix(got, "}}\n\n") {
		t.Errorf("got %q, want one in-band error frame", got)
	}
}

// A non-streamed answer is the chat.completion object of the served model.
func TestWireBody(t *testing.T) {
	w := chat.NewWire("chatcmpl-1", 7, false)
	resp := &llm.Response{Choices: []llm.Choice{{Text: "a&b", Finish: "stop"}}, Usage: llm.Usage{TotalTokens: 2}}
	got := string(w.Body("served", resp))
	want := `{"id":"chatcmpl-1","object":"chat.completion","created":7,"model":"served","choices":[{"index":0,"message":{"role":"assistant","content":"a&b","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":2,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// discard is a ResponseWriter that drops what it is sent and can flush.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) Flush()                      {}

// The hot path of a streamed answer: one text event to one chunk on the wire.
func BenchmarkStreamText(b *testing.B) {
	ew := sse.NewWriter(&discard{h: http.Header{}}, sse.WriterOptions{})
	defer ew.Close()
	_ = ew.Start(func(http.Header) {})
	s, _ := chat.NewWire("chatcmpl-1", 7, true).Open(ew, "gpt-4o-mini")
	ev := llm.Event{Type: llm.EvText, Text: "Hello, \"world\" and more text."}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Event(&ev); err != nil {
			b.Fatal(err)
		}
	}
}
