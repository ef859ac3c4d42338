package openai

import (
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

func mediaRequest(ps ...llm.Part) *llm.Request {
	return &llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: llm.RoleUser, Parts: ps}}}
}

var (
	pdf   = llm.Part{Type: llm.PartFile, Data: "JVBERi0xLjQ=", MediaType: "application/pdf", Filename: "draconomicon.pdf"}
	oaiID = llm.Part{Type: llm.PartFile, FileID: "file-6F2ksmvXxt4VdoqmHRw6kL", FileOf: "openai"}
	wav   = llm.Part{Type: llm.PartAudio, Data: "UklGRg==", MediaType: "audio/wav"}
	byURL = llm.Part{Type: llm.PartFile, URL: "https://example.com/a.pdf", MediaType: "application/pdf"}
)

// TestEncodeChatMedia: Chat's file part (filename and a data: URL, or file_id) and
// input_audio part, as OpenAI documents them; a file without a name gets one from its type.
func TestEncodeChatMedia(t *testing.T) {
	anon := pdf
	anon.Filename = ""
	got, err := encodeRequest(mediaRequest(pdf, oaiID, wav, anon), false)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"model":"gpt-4o","messages":[{"role":"user","content":[` +
		`{"type":"file","file":{"filename":"draconomicon.pdf","file_data":"data:application/pdf;base64,JVBERi0xLjQ="}},` +
		`{"type":"file","file":{"file_id":"file-6F2ksmvXxt4VdoqmHRw6kL"}},` +
		`{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}},` +
		`{"type":"file","file":{"filename":"file.pdf","file_data":"data:application/pdf;base64,JVBERi0xLjQ="}}]}],"stream":true}`
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestEncodeResponsesMedia: input_file by data, URL and id.
func TestEncodeResponsesMedia(t *testing.T) {
	got, err := encodeResponsesRequest(mediaRequest(pdf, byURL, oaiID))
	if err != nil {
		t.Fatal(err)
	}
	want := `"input":[{"role":"user","content":[` +
		`{"type":"input_file","filename":"draconomicon.pdf","file_data":"data:application/pdf;base64,JVBERi0xLjQ="},` +
		`{"type":"input_file","file_url":"https://example.com/a.pdf"},` +
		`{"type":"input_file","file_id":"file-6F2ksmvXxt4VdoqmHRw6kL"}]}]`
	if !strings.Contains(string(got), want) {
		t.Errorf("got\n%s\nwant it to hold\n%s", got, want)
	}
}

// TestEncodeMediaRefused: a part the API cannot carry is Unsupported before anything is
// sent, naming the part, so the chain tries a target that can.
func TestEncodeMediaRefused(t *testing.T) {
	gem := llm.Part{Type: llm.PartFile, FileID: "https://generativelanguage.googleapis.com/v1beta/files/x", FileOf: "gemini"}
	flac := llm.Part{Type: llm.PartAudio, Data: "ZkxhQw==", MediaType: "audio/flac"}
	for _, tt := range []struct {
		name      string
		responses bool
		part      llm.Part
		msg       string
	}{
		{"chat: a file by URL", false, byURL, "not its URL"},
		{"chat: a gemini file", false, gem, "only gemini targets"},
		{"chat: flac", false, flac, "wav and mp3"},
		{"responses: audio", true, wav, "takes no audio"},
		{"responses: a gemini file", true, gem, "only gemini targets"},
		{"responses: a gs URL", true, llm.Part{Type: llm.PartFile, URL: "gs://b/a.pdf"}, "http(s)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.responses {
				_, err = encodeResponsesRequest(mediaRequest(tt.part))
			} else {
				_, err = encodeRequest(mediaRequest(tt.part), false)
			}
			le, ok := err.(*llm.Error)
			if !ok || le.Kind != llm.Unsupported || llm.HTTPStatus(err) != 400 || !strings.Contains(le.Message, tt.msg) {
				t.Errorf("got %v, want an Unsupported 400 saying %q", err, tt.msg)
			}
		})
	}
}
