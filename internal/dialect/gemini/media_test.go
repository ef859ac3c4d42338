package gemini

import (
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// TestDecodeFileAndAudio: inlineData and fileData of a non-image type become file and
// audio parts; a Files API URI is a file only a Gemini target can read.
func TestDecodeFileAndAudio(t *testing.T) {
	body := `{"contents":[{"role":"user","parts":[
	{"inlineData":{"mimeType":"application/pdf","data":"JVBERi0="}},
	{"inlineData":{"mimeType":"audio/mp3","data":"SUQz"}},
	{"fileData":{"mimeType":"application/pdf","fileUri":"https://example.com/a.pdf"}},
	{"fileData":{"mimeType":"audio/wav","fileUri":"https://generativelanguage.googleapis.com/v1beta/files/abc"}},
	{"text":"what is said?"}]}]}`
	d, err := Decode([]byte(body), input("m:generateContent", ""))
	if err != nil {
		t.Fatal(err)
	}
	ps := d.Req.Messages[0].Parts
	want := []llm.Part{
		{Type: llm.PartFile, Data: "JVBERi0=", MediaType: "application/pdf"},
		{Type: llm.PartAudio, Data: "SUQz", MediaType: "audio/mp3"},
		{Type: llm.PartFile, URL: "https://example.com/a.pdf", MediaType: "application/pdf"},
		{Type: llm.PartFile, FileID: "https://generativelanguage.googleapis.com/v1beta/files/abc", FileOf: "gemini", MediaType: "audio/wav"},
		{Type: llm.PartText, Text: "what is said?"},
	}
	if len(ps) != len(want) {
		t.Fatalf("got %+v, want %d parts", ps, len(want))
	}
	for i := range want {
		if ps[i] != want[i] {
			t.Errorf("part %d: got %+v, want %+v", i, ps[i], want[i])
		}
	}
}
