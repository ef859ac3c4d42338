package oai

import (
	"encoding/base64"
	"io"
	"mime"
	"path"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
	wire "github.com/sluice-gw/sluice/internal/schema/openai"
)

// FilePart decodes a file part of an OpenAI wire at param p: data (file_data, a base64
// data: URL, or bare base64 whose media type the filename's extension names), url
// (Responses' file_url) or id (an OpenAI file, which only an OpenAI target can read), with
// the file's name. Exactly one source is taken, in that order.
func FilePart(p, data, url, id, name string) (llm.Part, error) {
	f := llm.Part{Type: llm.PartFile, Filename: name}
	switch {
	case data != "":
		mt, b64, ok := strings.Cut(data, ",")
		if !ok || len(mt) < 5 || !strings.EqualFold(mt[:5], "data:") || !strings.HasSuffix(strings.ToLower(mt), ";base64") {
			mt, b64 = mime.TypeByExtension(strings.ToLower(path.Ext(name))), data
		} else {
			mt = mt[5 : len(mt)-len(";base64")]
		}
		if !ValidBase64(b64) {
			return f, Invalid(p+".file_data", "Invalid '%s.file_data': expected a base64 data: URL (data:application/pdf;base64,...).", p)
		}
		mt, _, _ = strings.Cut(mt, ";")
		f.MediaType, f.Data = strings.ToLower(strings.TrimSpace(mt)), b64
		if f.MediaType == "" {
			f.MediaType = "application/octet-stream"
		}
	case url != "":
		if !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "http://") {
			return f, Invalid(p+".file_url", "Invalid '%s.file_url': expected an http(s) URL.", p)
		}
		f.URL, f.MediaType = url, mime.TypeByExtension(strings.ToLower(path.Ext(strings.SplitN(url, "?", 2)[0])))
		f.MediaType, _, _ = strings.Cut(f.MediaType, ";")
	case id != "":
		f.FileID, f.FileOf = id, "openai"
	default:
		return f, Invalid(p, "Missing required parameter: '%s.file_data', '%s.file_url' or '%s.file_id'.", p, p, p)
	}
	return f, nil
}

// AudioPart decodes an input_audio part of an OpenAI wire at param p: base64 data in
// format wav or mp3, the two the API takes.
func AudioPart(p string, a *wire.InputAudio) (llm.Part, error) {
	if a == nil || a.Data == "" {
		return llm.Part{}, Invalid(p+".input_audio.data", "Missing required parameter: '%s.input_audio.data'.", p)
	}
	if a.Format != "wav" && a.Format != "mp3" {
		return llm.Part{}, Invalid(p+".input_audio.format", "Invalid value for '%s.input_audio.format': '%s'. Supported values are: 'wav' and 'mp3'.", p, a.Format)
	}
	if !ValidBase64(a.Data) {
		return llm.Part{}, Invalid(p+".input_audio.data", "Invalid '%s.input_audio.data': expected base64-encoded audio.", p)
	}
	return llm.Part{Type: llm.PartAudio, Data: a.Data, MediaType: llm.AudioType(a.Format)}, nil
}

// ValidBase64 reports whether s is standard base64 (with padding), reading it in a stream
// so a large file costs no copy.
func ValidBase64(s string) bool {
	if s == "" || len(s)%4 != 0 {
		return false
	}
	_, err := io.Copy(io.Discard, base64.NewDecoder(base64.StdEncoding, strings.NewReader(s)))
	return err == nil
}
