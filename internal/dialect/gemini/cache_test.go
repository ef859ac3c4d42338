package gemini

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/sse"
)

// TestCachedContent: a client's context cache is accepted (issue 46); the client's body
// carries it to a Gemini target as it came, and any other target must refuse the request
// (Native.Only), which without the cached context would be another one.
func TestCachedContent(t *testing.T) {
	tests := []struct {
		name string
		body string
		only []string
	}{
		{"cached", `{"contents":[{"parts":[{"text":"a"}]}],"cachedContent":"cachedContents/abc123"}`, []string{"cachedContent"}},
		{"null", `{"contents":[{"parts":[{"text":"a"}]}],"cachedContent":null}`, nil},
		{"none", `{"contents":[{"parts":[{"text":"a"}]}]}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Decode([]byte(tt.body), input("m:generateContent", ""))
			if err != nil {
				t.Fatal(err)
			}
			n := d.Req.Native
			if n == nil || string(n.Body) != tt.body || strings.Join(n.Only, ",") != strings.Join(tt.only, ",") {
				t.Fatalf("got native %+v, want the body as it came, only %v", n, tt.only)
			}
			if e := d.Req.NativeOnly("openai"); (e != nil) != (tt.only != nil) {
				t.Errorf("another target's verdict: %v", e)
			}
			if e := d.Req.NativeOnly("gemini"); e != nil {
				t.Errorf("a Gemini target refuses: %v", e)
			}
		})
	}
}

// TestWireCachedTokens: cache reads, whatever the target's wire said, reach a Gemini client
// as usageMetadata.cachedContentTokenCount (part of promptTokenCount).
func TestWireCachedTokens(t *testing.T) {
	rec := httptest.NewRecorder()
	w := NewWire("r1", true, false)
	sink, err := w.Open(sse.NewWriter(rec, sse.WriterOptions{}), "m")
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []llm.Event{{Type: llm.EvStart}, {Type: llm.EvText, Text: "hi"}, {Type: llm.EvDone, Finish: "stop"}} {
		if err := sink.Event(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.End(&llm.Usage{PromptTokens: 1000, CompletionTokens: 5, CachedTokens: 800, CacheWriteTokens: 150}); err != nil {
		t.Fatal(err)
	}
	if want := `"usageMetadata":{"promptTokenCount":1000,"candidatesTokenCount":5,"totalTokenCount":1005,"cachedContentTokenCount":800}`; !strings.Contains(rec.Body.String(), want) {
		t.Errorf("got %s, want %s", rec.Body.String(), want)
	}
}
