package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestAudioFallback: real multipart and binary framing from httptest upstreams. A target
// that answers 500 falls back to the next, which gets the whole upload again (model set to
// its own) and answers; speech streams the second target's audio with its media type.
func TestAudioFallback(t *testing.T) {
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		http.Error(w, `{"error":{"message":"boom","type":"server_error"}}`, 500)
	}))
	defer bad.Close()
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/audio/transcriptions":
			if err := r.ParseMultipartForm(1 << 20); err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			f, h, err := r.FormFile("file")
			if err != nil || r.FormValue("model") != "whisper-1" || h.Filename != "a.bin" {
				http.Error(w, "bad form", 400)
				return
			}
			b, _ := io.ReadAll(f)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"text":"got `+string(b)+`","usage":{"type":"duration","seconds":2.2}}`)
		case "/v1/audio/speech":
			w.Header().Set("Content-Type", "audio/mpeg")
			for i := range 3 {
				w.Write([]byte(strings.Repeat(string(rune('a'+i)), 100)))
				w.(http.Flusher).Flush()
			}
		}
	}))
	defer good.Close()
	yaml := `
providers:
  bad:  {kind: openai-compatible, base_url: "` + bad.URL + `/v1"}
  good: {kind: openai-compatible, base_url: "` + good.URL + `/v1"}
transcriptions:
  whisper-1: [bad/whisper-1, good/whisper-1]
speech:
  tts-1: [bad/tts-1, good/tts-1]
`
	url, _ := serveServer(t, yaml, nil, time.Minute, nil)
	r := do(t, "POST", url+"/v1/audio/transcriptions", "", formBody("model", "whisper-1", "file"),
		"Content-Type", "multipart/form-data; boundary=B")
	if r.status != 200 || string(r.body) != `{"text":"got RIFF....","usage":{"type":"duration","seconds":2.2}}` || r.header.Get("X-Sluice-Target") != "good/whisper-1" {
		t.Errorf("transcription: %d %s %s", r.status, r.header.Get("X-Sluice-Target"), r.body)
	}
	r = do(t, "POST", url+"/v1/audio/speech", "", `{"model":"tts-1","input":"hi","voice":"alloy"}`)
	want := strings.Repeat("a", 100) + strings.Repeat("b", 100) + strings.Repeat("c", 100)
	if r.status != 200 || r.header.Get("Content-Type") != "audio/mpeg" || string(r.body) != want || r.header.Get("X-Sluice-Attempts") != "2" {
		t.Errorf("speech: %d %s %s %q", r.status, r.header.Get("Content-Type"), r.header.Get("X-Sluice-Attempts"), r.body)
	}
}
