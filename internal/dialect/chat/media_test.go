package chat

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// TestDecodeFileAndAudio: Chat's file part (file_data as a data: URL, or file_id) and
// input_audio part become llm file and audio parts, as OpenAI documents them.
func TestDecodeFileAndAudio(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":[
	{"type":"text","text":"summarise"},
	{"type":"file","file":{"filename":"draconomicon.pdf","file_data":"data:application/pdf;base64,JVBERi0xLjQ="}},
	{"type":"file","file":{"file_id":"file-6F2ksmvXxt4VdoqmHRw6kL"}},
	{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}},
	{"type":"input_audio","input_audio":{"data":"SUQz","format":"mp3"}}]}]}`
	cr, err := Decode([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	ps := cr.Req.Messages[0].Parts
	want := []llm.Part{
		{Type: llm.PartText, Text: "summarise"},
		{Type: llm.PartFile, Data: "JVBERi0xLjQ=", MediaType: "application/pdf", Filename: "draconomicon.pdf"},
		{Type: llm.PartFile, FileID: "file-6F2ksmvXxt4VdoqmHRw6kL", FileOf: "openai"},
		{Type: llm.PartAudio, Data: "UklGRg==", MediaType: "audio/wav"},
		{Type: llm.PartAudio, Data: "SUQz", MediaType: "audio/mp3"},
	}
	if len(ps) != len(want) {
		t.Fatalf("got %d parts %+v, want %d", len(ps), ps, len(want))
	}
	for i := range want {
		if ps[i] != want[i] {
			t.Errorf("part %d: got %+v, want %+v", i, ps[i], want[i])
		}
	}
	if f := llm.AudioFormat(ps[4].MediaType); f != "mp3" {
		t.Errorf("got format %q of %q, want mp3 back", f, ps[4].MediaType)
	}
}

func TestDecodeFileAndAudioRefused(t *testing.T) {
	for _, tt := range []struct{ name, part, role, param, msg string }{
		{"audio format", `{"type":"input_audio","input_audio":{"data":"AAAA","format":"flac"}}`, "user", "messages[0].content[0].input_audio.format", "'flac'"},
		{"audio data", `{"type":"input_audio","input_audio":{"data":"not base64!","format":"wav"}}`, "user", "messages[0].content[0].input_audio.data", "base64"},
		{"audio missing", `{"type":"input_audio"}`, "user", "messages[0].content[0].input_audio.data", "Missing"},
		{"file missing", `{"type":"file"}`, "user", "messages[0].content[0].file", "Missing"},
		{"file empty", `{"type":"file","file":{"filename":"a.pdf"}}`, "user", "messages[0].content[0].file", "file_data"},
		{"file data", `{"type":"file","file":{"file_data":"data:application/pdf;base64,%%%"}}`, "user", "messages[0].content[0].file.file_data", "base64"},
		{"file in system", `{"type":"file","file":{"file_id":"f"}}`, "system", "messages[0].content[0].type", "only allowed in user"},
		{"audio in assistant", `{"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}}`, "assistant", "messages[0].content[0].type", "only allowed in user"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(`{"model":"m","messages":[{"role":"` + tt.role + `","content":[` + tt.part + `]}]}`))
			var e *llm.Error
			if !errors.As(err, &e) || llm.HTTPStatus(err) != 400 || e.Param != tt.param || !strings.Contains(e.Message, tt.msg) {
				t.Fatalf("got %v (param %q), want a 400 at %s saying %q", err, paramOf(e), tt.param, tt.msg)
			}
		})
	}
}

func paramOf(e *llm.Error) string {
	if e == nil {
		return ""
	}
	return e.Param
}
