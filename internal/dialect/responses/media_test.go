package responses

import (
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// TestDecodeFileAndAudio: input_file (file_data, file_url, file_id) and input_audio in a
// user message become llm file and audio parts, so targets of other wires can take them;
// a Responses target still gets the input as it came (Native).
func TestDecodeFileAndAudio(t *testing.T) {
	body := `{"model":"m","input":[{"role":"user","content":[
	{"type":"input_file","filename":"a.pdf","file_data":"data:application/pdf;base64,JVBERi0="},
	{"type":"input_file","file_url":"https://example.com/b.pdf"},
	{"type":"input_file","file_id":"file-abc"},
	{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}]}]}`
	rr, err := Decode([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if rr.NativeOnly() != "" {
		t.Errorf("got native-only %q, want the parts translatable", rr.NativeOnly())
	}
	ps := rr.Req.Messages[0].Parts
	want := []llm.Part{
		{Type: llm.PartFile, Data: "JVBERi0=", MediaType: "application/pdf", Filename: "a.pdf"},
		{Type: llm.PartFile, URL: "https://example.com/b.pdf", MediaType: "application/pdf"},
		{Type: llm.PartFile, FileID: "file-abc", FileOf: "openai"},
		{Type: llm.PartAudio, Data: "UklGRg==", MediaType: "audio/wav"},
	}
	if len(ps) != len(want) {
		t.Fatalf("got %+v, want %d parts", ps, len(want))
	}
	for i := range want {
		if ps[i] != want[i] {
			t.Errorf("part %d: got %+v, want %+v", i, ps[i], want[i])
		}
	}
	if !strings.Contains(string(rr.Req.Native.Fields[1].Value), `"file_data":"data:application/pdf;base64,JVBERi0="`) {
		t.Errorf("got native input %s, want it as it came", rr.Req.Native.Fields[1].Value)
	}
}

func TestDecodeFileAndAudioRefused(t *testing.T) {
	for _, part := range []string{
		`{"type":"input_file"}`,
		`{"type":"input_file","file_url":"ftp://x/y.pdf"}`,
		`{"type":"input_file","file_data":"data:application/pdf;base64,!!"}`,
		`{"type":"input_audio","input_audio":{"data":"AAAA","format":"ogg"}}`,
	} {
		_, err := Decode([]byte(`{"model":"m","input":[{"role":"user","content":[` + part + `]}]}`))
		if llm.KindOf(err) != llm.Invalid || llm.HTTPStatus(err) != 400 || !strings.Contains(err.Error(), "input[0].content[0]") {
			t.Errorf("%s: got %v, want a 400 naming input[0].content[0]", part, err)
		}
	}
}
