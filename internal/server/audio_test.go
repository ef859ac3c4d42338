package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAudioSim: the simulation answers each Media route through its alias: a transcription
// in json and text, a WAV for speech (streamed, audio/wav), a PNG for an image edit; a
// body that is not multipart is a 400 in OpenAI's shape, one over max_upload_bytes a 413.
func TestAudioSim(t *testing.T) {
	yaml := `
providers:
  sim: {kind: sim}
limits: {max_upload_bytes: 4096}
transcriptions:
  whisper-1: [sim/transcribe]
speech:
  tts-1: [sim/speech]
images:
  dall-e-2: [sim/image]
`
	url, _ := serveServer(t, yaml, nil, time.Minute, nil)
	mp := []string{"Content-Type", "multipart/form-data; boundary=B"}
	r := do(t, "POST", url+"/v1/audio/transcriptions", "", formBody("model", "whisper-1", "file"), mp...)
	if r.status != 200 || !strings.Contains(string(r.body), `"text":"Simulated transcription of a.bin`) {
		t.Errorf("json transcription: %d %s", r.status, r.body)
	}
	r = do(t, "POST", url+"/v1/audio/transcriptions", "", formBody("model", "whisper-1", "response_format", "text", "file"), mp...)
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") || !strings.HasPrefix(string(r.body), "Simulated") {
		t.Errorf("text transcription: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	r = do(t, "POST", url+"/v1/audio/speech", "", `{"model":"tts-1","input":"hello there","voice":"alloy"}`)
	if r.status != 200 || r.header.Get("Content-Type") != "audio/wav" || !strings.HasPrefix(string(r.body), "RIFF") || len(r.body) < 1000 {
		t.Errorf("speech: %d %s %d bytes", r.status, r.header.Get("Content-Type"), len(r.body))
	}
	r = do(t, "POST", url+"/v1/images/edits", "", formBody("model", "dall-e-2", "prompt", "a lighthouse", "image"), mp...)
	if r.status != 200 || !strings.Contains(string(r.body), `"b64_json":"iVBOR`) {
		t.Errorf("image edit: %d %.200s", r.status, r.body)
	}
	r = do(t, "POST", url+"/v1/audio/transcriptions", "", `{"model":"whisper-1"}`)
	if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), `"invalid_request_error"`) {
		t.Errorf("JSON body: %d %s", r.status, r.body)
	}
	big := strings.Replace(formBody("model", "whisper-1", "file"), "RIFF....", strings.Repeat("x", 8192), 1)
	r = do(t, "POST", url+"/v1/audio/transcriptions", "", big, mp...)
	if r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversize upload: %d %s", r.status, r.body)
	}
}
