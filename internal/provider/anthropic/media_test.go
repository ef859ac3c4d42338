package anthropic

import (
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// TestEncodeDocuments: a PDF goes as a document block with a base64 or url source, a
// plain-text file as a text source, the file's name as the title.
func TestEncodeDocuments(t *testing.T) {
	req := llm.Request{Model: "claude-sonnet-4-5", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
		{Type: llm.PartFile, Data: "JVBERi0xLjQ=", MediaType: "application/pdf", Filename: "draconomicon.pdf"},
		{Type: llm.PartFile, URL: "https://example.com/a.pdf", MediaType: "application/pdf"},
		{Type: llm.PartFile, Data: "cGxhaW4gd29yZHM=", MediaType: "text/plain", Filename: "notes.txt"},
		{Type: llm.PartText, Text: "Summarise."}}}}}
	got, _, err := encodeRequest(&req, 4096)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON(t, got, `{"model":"claude-sonnet-4-5","max_tokens":4096,"messages":[{"role":"user","content":[
	{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjQ="},"title":"draconomicon.pdf"},
	{"type":"document","source":{"type":"url","url":"https://example.com/a.pdf"}},
	{"type":"document","source":{"type":"text","media_type":"text/plain","data":"plain words"},"title":"notes.txt"},
	{"type":"text","text":"Summarise."}]}],"stream":true}`)
}

// TestEncodeDocumentsRefused: what the Messages API cannot read is Unsupported (the chain
// moves on), named, before anything is sent.
func TestEncodeDocumentsRefused(t *testing.T) {
	for _, tt := range []struct {
		name string
		part llm.Part
		msg  string
	}{
		{"audio", llm.Part{Type: llm.PartAudio, Data: "UklGRg==", MediaType: "audio/wav"}, "input_audio part of type audio/wav"},
		{"docx", llm.Part{Type: llm.PartFile, Data: "UEsDBA==", MediaType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document"}, "PDFs and plain text"},
		{"openai file", llm.Part{Type: llm.PartFile, FileID: "file-1", FileOf: "openai"}, "only openai targets"},
		{"gs pdf", llm.Part{Type: llm.PartFile, URL: "gs://b/a.pdf", MediaType: "application/pdf"}, "http(s) URL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{tt.part}}}}
			_, _, err := encodeRequest(&req, 4096)
			le := wantKind(t, err, llm.Unsupported)
			if le.Status != 400 || le.Param != "messages" || !strings.Contains(le.Message, tt.msg) {
				t.Errorf("got %+v, want a 400 at messages saying %q", le, tt.msg)
			}
		})
	}
}
