package upload

import (
	"io"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/llm"
)

var form = Form{Files: []string{"file"}, Required: []string{"file"}}

func input(ct, body string) dialect.Input {
	return dialect.Input{Header: func(string) string { return ct }, Body: strings.NewReader(body)}
}

const good = "--B\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n" +
	"--B\r\nContent-Disposition: form-data; name=\"language\"\r\n\r\nen\r\n" +
	"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\nContent-Type: audio/wav\r\n\r\nRIFFdata\r\n--B--\r\n"

func TestRead(t *testing.T) {
	model, req, err := Read(input("multipart/form-data; boundary=B", good), form)
	if err != nil || model != "whisper-1" || len(req.Extra) != 1 || string(req.Extra[0].Value) != `"en"` || len(req.Files) != 1 {
		t.Fatalf("got %q %+v %v", model, req, err)
	}
	b, _ := io.ReadAll(req.Files[0].Open())
	if string(b) != "RIFFdata" || req.Files[0].Filename != "a.wav" || req.Files[0].ContentType != "audio/wav" {
		t.Errorf("file %q %+v", b, req.Files[0])
	}
	again, _ := io.ReadAll(req.Files[0].Open()) // each attempt reads it whole
	if string(again) != "RIFFdata" {
		t.Errorf("second read %q", again)
	}
	req.CloseFiles()
}

func TestReadRefuses(t *testing.T) {
	tests := []struct{ name, ct, body string }{
		{"json", "application/json", `{"model":"whisper-1"}`},
		{"no boundary", "multipart/form-data", good},
		{"truncated", "multipart/form-data; boundary=B", good[:len(good)-20]},
		{"no file", "multipart/form-data; boundary=B", "--B\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nw\r\n--B--\r\n"},
		{"no model", "multipart/form-data; boundary=B", "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\nx\r\n--B--\r\n"},
		{"empty", "multipart/form-data; boundary=B", ""},
	}
	for _, tt := range tests {
		_, _, err := Read(input(tt.ct, tt.body), form)
		if llm.KindOf(err) != llm.Invalid || llm.HTTPStatus(err) != 400 {
			t.Errorf("%s: got %v (status %d), want a 400", tt.name, err, llm.HTTPStatus(err))
		}
	}
}

// FuzzRead: whatever the body, Read answers a request or a 400, never another error or a
// panic, and a file it keeps reads back as many bytes as it says.
func FuzzRead(f *testing.F) {
	f.Add(good)
	f.Add(good[:40])
	f.Add("--B\r\n\r\n--B--")
	f.Fuzz(func(t *testing.T, body string) {
		_, req, err := Read(input("multipart/form-data; boundary=B", body), form)
		if err != nil {
			if llm.HTTPStatus(err) != 400 {
				t.Fatalf("got %v (status %d), want a 400", err, llm.HTTPStatus(err))
			}
			return
		}
		for _, fp := range req.Files {
			if n, _ := io.Copy(io.Discard, fp.Open()); n != fp.Size {
				t.Fatalf("file read %d bytes, want %d", n, fp.Size)
			}
		}
		req.CloseFiles()
	})
}
