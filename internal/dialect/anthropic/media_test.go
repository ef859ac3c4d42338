package anthropic

import (
	"slices"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// TestDecodeDocuments: a base64 or url document becomes a file part (its title the file's
// name), a plain-text document text; only a Files API document stays Anthropic's own.
func TestDecodeDocuments(t *testing.T) {
	body := `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[
	{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0="},"title":"Q3 report","citations":{"enabled":true}},
	{"type":"document","source":{"type":"url","url":"https://example.com/a.pdf"}},
	{"type":"document","source":{"type":"text","media_type":"text/plain","data":"plain words"}},
	{"type":"text","text":"summarise"}]}]}`
	r, err := Decode([]byte(body), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Req.Native.Only) != 0 {
		t.Errorf("got only %v, want every document translatable", r.Req.Native.Only)
	}
	ps := r.Req.Messages[0].Parts
	want := []llm.Part{
		{Type: llm.PartFile, Data: "JVBERi0=", MediaType: "application/pdf", Filename: "Q3 report"},
		{Type: llm.PartFile, URL: "https://example.com/a.pdf", MediaType: "application/pdf"},
		{Type: llm.PartText, Text: "plain words"},
		{Type: llm.PartText, Text: "summarise"},
	}
	if !slices.Equal(ps, want) {
		t.Errorf("got %+v\nwant %+v", ps, want)
	}

	r, err = Decode([]byte(`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"file","file_id":"file_011"}}]}]}`),
		func(string) string { return "" })
	if err != nil || !slices.Contains(r.Req.Native.Only, "document blocks") {
		t.Errorf("got %v, %+v: want a Files API document kept to Anthropic targets", err, r)
	}
	_, err = Decode([]byte(`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"not base64"}}]}]}`),
		func(string) string { return "" })
	if llm.KindOf(err) != llm.Invalid {
		t.Errorf("got %v, want invalid base64 refused", err)
	}
}
