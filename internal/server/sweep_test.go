package server_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
)

// TestBadInputSweep sends bad input to every route of issue 48: wrong content types,
// oversize uploads and bodies, truncated multipart, malformed JSON, unknown ids and another
// key's ids. Each is the 4xx the table says, in its wire's error shape (OpenAI's;
// Anthropic's for /v1/messages/batches), never a 5xx, never the upstream's key.
func TestBadInputSweep(t *testing.T) {
	alice, bob := auth.NewSecret(), auth.NewSecret()
	up := objectsUpstream(t)
	url := serveGate(t, `
providers:
  oa: {kind: openai, base_url: "${UP}/v1", api_key: sk-objects-SECRET}
  an: {kind: anthropic, base_url: "${UP}", api_key: sk-objects-SECRET}
  sim: {kind: sim}
models:
  batchy: [oa/gpt-4o-mini]
  claude: [an/claude-sonnet-4-5]
  batch-sim: {targets: [sim/echo], batch: emulate}
files: {model: batchy, anthropic_model: claude, max_upload: 1KiB}
limits: {max_upload_bytes: 2048, max_body_bytes: 2048}
transcriptions: {whisper-1: [sim/transcribe]}
speech: {tts-1: [sim/speech]}
images: {gpt-image-1: [sim/image]}
moderations: {omni-moderation-latest: [sim/moderation]}
rerank: {rerank: [sim/rerank]}
keys:
  - {name: alice, hash: `+auth.Hash(alice)+`, models: ["*"]}
  - {name: bob, hash: `+auth.Hash(bob)+`, models: ["*"]}
`, map[string]string{"UP": up.URL}, time.Minute, nil)

	const mp = "multipart/form-data; boundary=B"
	// Alice's objects, which bob must not see: a file and a batch on the OpenAI target, an
	// emulated file and batch, a message batch.
	made := func(path, ct, body string) string {
		t.Helper()
		r := do(t, "POST", url+path, alice, body, "Content-Type", ct)
		id := jsonField(r.body, "id")
		if r.status != 200 || id == "" {
			t.Fatalf("alice's POST %s: %d %s", path, r.status, r.body)
		}
		return id
	}
	line := `{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"batch-sim","messages":[{"role":"user","content":"hi"}]}}` + "\n"
	file := made("/v1/files", mp, formBody("purpose", "batch", "file"))
	batch := made("/v1/batches", "application/json", `{"input_file_id":"`+file+`","endpoint":"/v1/chat/completions","completion_window":"24h"}`)
	emFile := made("/v1/files?model=batch-sim", mp, fileForm(line))
	emBatch := made("/v1/batches", "application/json", `{"input_file_id":"`+emFile+`","endpoint":"/v1/chat/completions","completion_window":"24h"}`)
	msgBatch := made("/v1/messages/batches", "application/json", msgBatchBody("claude"))

	big := strings.Repeat("x", 4096)
	tests := []struct {
		name, method, path, key, ct, body string
		status                            int
	}{
		// /v1/files
		{"upload as JSON", "POST", "/v1/files", alice, "application/json", `{"file":"x","purpose":"batch"}`, 400},
		{"upload as text", "POST", "/v1/files", alice, "text/plain", "hello", 400},
		{"upload without boundary", "POST", "/v1/files", alice, "multipart/form-data", formBody("purpose", "batch", "file"), 400},
		{"upload of another boundary", "POST", "/v1/files", alice, "multipart/form-data; boundary=C", formBody("purpose", "batch", "file"), 400},
		{"upload truncated in the file", "POST", "/v1/files", alice, mp, cut(formBody("purpose", "batch", "file"), 10), 400},
		{"upload truncated in the headers", "POST", "/v1/files", alice, mp, "--B\r\nContent-Disposition: form-da", 400},
		{"upload without a file", "POST", "/v1/files", alice, mp, "--B\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n--B--\r\n", 400},
		{"upload empty", "POST", "/v1/files", alice, mp, "", 400},
		{"upload over max_upload", "POST", "/v1/files", alice, mp, fileForm(big), 413},
		{"emulated upload over max_upload", "POST", "/v1/files?model=batch-sim", alice, mp, fileForm(big), 413},
		{"upload to an unknown model", "POST", "/v1/files?model=nope", alice, mp, formBody("purpose", "batch", "file"), 404},
		{"upload to an Anthropic model", "POST", "/v1/files?model=claude", alice, mp, fileForm("x"), 404},
		{"unknown file id", "GET", "/v1/files/file-nope", alice, "", "", 404},
		{"unknown file id's content", "GET", "/v1/files/file-nope/content", alice, "", "", 404},
		{"unknown file id deleted", "DELETE", "/v1/files/file-nope", alice, "", "", 404},
		{"file id of another prefix", "GET", "/v1/files/" + batch, alice, "", "", 404},
		{"file id of an unknown host", "GET", "/v1/files/" + idOf("file-", "ghost\nfile-u0"), alice, "", "", 404},
		{"emulated file id never made", "GET", "/v1/files/" + idOf("file-", "emulate/batch-sim\nfile-zzz") + "/content", alice, "", "", 404},
		{"file id not base64", "GET", "/v1/files/file-%FF%00", alice, "", "", 404},
		{"list of an unknown model", "GET", "/v1/files?model=nope", alice, "", "", 404},
		{"list of a bad cursor", "GET", "/v1/files?model=batch-sim&after=zz&limit=abc", alice, "", "", 400},
		{"emulated files listed in an unknown order", "GET", "/v1/files?model=batch-sim&order=sideways", alice, "", "", 400},
		{"another key's file", "GET", "/v1/files/" + file, bob, "", "", 404},
		{"another key's file content", "GET", "/v1/files/" + file + "/content", bob, "", "", 404},
		{"another key's file deleted", "DELETE", "/v1/files/" + file, bob, "", "", 404},
		{"another key's emulated file", "GET", "/v1/files/" + emFile, bob, "", "", 404},
		{"another key's emulated content", "GET", "/v1/files/" + emFile + "/content", bob, "", "", 404},
		// /v1/batches
		{"batch of malformed JSON", "POST", "/v1/batches", alice, "application/json", `{"input_file_id":`, 400},
		{"batch of a JSON array", "POST", "/v1/batches", alice, "application/json", `[1]`, 400},
		{"batch without a file", "POST", "/v1/batches", alice, "application/json", `{"endpoint":"/v1/chat/completions","completion_window":"24h"}`, 400},
		{"batch of an unknown file", "POST", "/v1/batches", alice, "application/json", `{"input_file_id":"file-nope","endpoint":"/v1/chat/completions","completion_window":"24h"}`, 404},
		{"batch of another key's file", "POST", "/v1/batches", bob, "application/json", `{"input_file_id":"` + file + `","endpoint":"/v1/chat/completions","completion_window":"24h"}`, 404},
		{"batch of another key's emulated file", "POST", "/v1/batches", bob, "application/json", `{"input_file_id":"` + emFile + `","endpoint":"/v1/chat/completions","completion_window":"24h"}`, 404},
		{"batch as text", "POST", "/v1/batches", alice, "text/plain", `{"input_file_id":"` + file + `"}`, 400},
		{"batch body over 1 MiB", "POST", "/v1/batches", alice, "application/json", `{"metadata":{"a":"` + strings.Repeat("x", 1<<20) + `"}}`, 413},
		{"unknown batch id", "GET", "/v1/batches/batch_nope", alice, "", "", 404},
		{"unknown batch cancelled", "POST", "/v1/batches/batch_nope/cancel", alice, "", "", 404},
		{"another key's batch", "GET", "/v1/batches/" + batch, bob, "", "", 404},
		{"another key's emulated batch", "GET", "/v1/batches/" + emBatch, bob, "", "", 404},
		{"another key's emulated batch cancelled", "POST", "/v1/batches/" + emBatch + "/cancel", bob, "", "", 404},
		// /v1/messages/batches (Anthropic's shape)
		{"message batch of malformed JSON", "POST", "/v1/messages/batches", alice, "application/json", `{"requests":[`, 400},
		{"message batch without requests", "POST", "/v1/messages/batches", alice, "application/json", `{"requests":[]}`, 400},
		{"message batch of requests not objects", "POST", "/v1/messages/batches", alice, "application/json", `{"requests":[1,2]}`, 400},
		{"message batch of an unknown model", "POST", "/v1/messages/batches", alice, "application/json", msgBatchBody("nope"), 404},
		{"message batch over the limit", "POST", "/v1/messages/batches", alice, "application/json", msgBatchBody("claude", big), 413},
		{"message batch of an Anthropic and an OpenAI model", "POST", "/v1/messages/batches", alice, "application/json",
			strings.TrimSuffix(msgBatchBody("claude"), "]}") + `,{"custom_id":"b","params":{"model":"batchy","max_tokens":8,"messages":[]}}]}`, 404},
		{"message batch of an OpenAI model", "POST", "/v1/messages/batches", alice, "application/json", msgBatchBody("batchy"), 404},
		{"message batch of an emulated alias", "POST", "/v1/messages/batches", alice, "application/json", msgBatchBody("batch-sim"), 404},
		{"message batches listed of an OpenAI model", "GET", "/v1/messages/batches?model=batchy", alice, "", "", 404},
		{"batches listed of an Anthropic model", "GET", "/v1/batches?model=claude", alice, "", "", 404},
		{"message batch as text", "POST", "/v1/messages/batches", alice, "text/plain", msgBatchBody("claude"), 400},
		{"results of a message batch in progress", "GET", "/v1/messages/batches/" + msgBatch + "/results", alice, "", "", 404},
		{"message batch id of an unknown host", "GET", "/v1/messages/batches/" + idOf("msgbatch_", "ghost\nmsgbatch_u1"), alice, "", "", 404},
		{"unknown message batch", "GET", "/v1/messages/batches/msgbatch_nope", alice, "", "", 404},
		{"unknown message batch's results", "GET", "/v1/messages/batches/msgbatch_nope/results", alice, "", "", 404},
		{"unknown message batch deleted", "DELETE", "/v1/messages/batches/msgbatch_nope", alice, "", "", 404},
		{"another key's message batch", "GET", "/v1/messages/batches/" + msgBatch, bob, "", "", 404},
		{"another key's message batch cancelled", "POST", "/v1/messages/batches/" + msgBatch + "/cancel", bob, "", "", 404},
		{"another key's message batch's results", "GET", "/v1/messages/batches/" + msgBatch + "/results", bob, "", "", 404},
		{"another key's message batch deleted", "DELETE", "/v1/messages/batches/" + msgBatch, bob, "", "", 404},
		// /v1/audio/transcriptions and /v1/images/edits: multipart in
		{"transcription as JSON", "POST", "/v1/audio/transcriptions", alice, "application/json", `{"model":"whisper-1"}`, 400},
		{"transcription as text", "POST", "/v1/audio/transcriptions", alice, "text/plain", "hello", 400},
		{"transcription without boundary", "POST", "/v1/audio/transcriptions", alice, "multipart/form-data", formBody("model", "whisper-1", "file"), 400},
		{"transcription truncated", "POST", "/v1/audio/transcriptions", alice, mp, cut(formBody("model", "whisper-1", "file"), 12), 400},
		{"transcription truncated in the headers", "POST", "/v1/audio/transcriptions", alice, mp, "--B\r\nContent-Disposition: form-data; name=\"mo", 400},
		{"transcription without a file", "POST", "/v1/audio/transcriptions", alice, mp, "--B\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n--B--\r\n", 400},
		{"transcription without a model", "POST", "/v1/audio/transcriptions", alice, mp, fileForm("RIFF"), 400},
		{"transcription of an unknown model", "POST", "/v1/audio/transcriptions", alice, mp, formBody("model", "nope", "file"), 404},
		{"transcription over the limit", "POST", "/v1/audio/transcriptions", alice, mp, strings.Replace(formBody("model", "whisper-1", "file"), "RIFF....", big, 1), 413},
		{"transcription with two files", "POST", "/v1/audio/transcriptions", alice, mp, strings.Replace(formBody("model", "whisper-1", "file"), "--B--\r\n", "", 1) + fileForm("x"), 400},
		{"image edit as JSON", "POST", "/v1/images/edits", alice, "application/json", `{"model":"gpt-image-1","prompt":"x"}`, 400},
		{"image edit truncated", "POST", "/v1/images/edits", alice, mp, cut(formBody("model", "gpt-image-1", "prompt", "x", "image"), 12), 400},
		{"image edit without a prompt", "POST", "/v1/images/edits", alice, mp, formBody("model", "gpt-image-1", "image"), 400},
		{"image edit without an image", "POST", "/v1/images/edits", alice, mp, "--B\r\nContent-Disposition: form-data; name=\"prompt\"\r\n\r\nx\r\n--B--\r\n", 400},
		{"image edit over the limit", "POST", "/v1/images/edits", alice, mp, strings.Replace(formBody("model", "gpt-image-1", "prompt", "x", "image"), "RIFF....", big, 1), 413},
		// JSON routes
		{"speech of malformed JSON", "POST", "/v1/audio/speech", alice, "application/json", `{"model":"tts-1",`, 400},
		{"speech as multipart", "POST", "/v1/audio/speech", alice, mp, formBody("model", "tts-1", "file"), 400},
		{"speech without input", "POST", "/v1/audio/speech", alice, "application/json", `{"model":"tts-1","voice":"alloy"}`, 400},
		{"speech in an unknown format", "POST", "/v1/audio/speech", alice, "application/json", `{"model":"tts-1","input":"x","voice":"alloy","response_format":"midi"}`, 400},
		{"speech of an unknown model", "POST", "/v1/audio/speech", alice, "application/json", `{"model":"nope","input":"x","voice":"alloy"}`, 404},
		{"speech over the limit", "POST", "/v1/audio/speech", alice, "application/json", `{"model":"tts-1","voice":"alloy","input":"` + big + `"}`, 413},
		{"image of malformed JSON", "POST", "/v1/images/generations", alice, "application/json", `{"prompt":`, 400},
		{"image as multipart", "POST", "/v1/images/generations", alice, mp, formBody("model", "gpt-image-1", "image"), 400},
		{"image over the limit", "POST", "/v1/images/generations", alice, "application/json", `{"prompt":"` + big + `"}`, 413},
		{"moderation of malformed JSON", "POST", "/v1/moderations", alice, "application/json", `{"input":"x"`, 400},
		{"moderation of an image without a URL", "POST", "/v1/moderations", alice, "application/json", `{"input":[{"type":"image_url","image_url":{"url":7}}]}`, 400},
		{"moderation as text", "POST", "/v1/moderations", alice, "text/plain", `kill`, 400},
		{"rerank of malformed JSON", "POST", "/v1/rerank", alice, "application/json", `{"model":"rerank","query":`, 400},
		{"rerank as multipart", "POST", "/v1/rerank", alice, mp, formBody("model", "rerank", "file"), 400},
		{"rerank of an unknown model", "POST", "/v1/rerank", alice, "application/json", `{"model":"nope","query":"q","documents":["a"]}`, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h []string
			if tt.ct != "" {
				h = []string{"Content-Type", tt.ct}
			}
			r := do(t, tt.method, url+tt.path, tt.key, tt.body, h...)
			if r.status != tt.status || strings.Contains(string(r.body), "SECRET") {
				t.Errorf("got %d %s, want %d", r.status, r.body, tt.status)
			}
			checkWireError(t, tt.path, r)
		})
	}
	// The same oversize bodies sent chunked, without a Content-Length: refused when the
	// limit is crossed.
	for _, tt := range tests {
		if tt.status != http.StatusRequestEntityTooLarge {
			continue
		}
		t.Run(tt.name+" chunked", func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, url+tt.path, struct{ io.Reader }{strings.NewReader(tt.body)})
			req.Header.Set("Content-Type", tt.ct)
			req.Header.Set("Authorization", "Bearer "+tt.key)
			r := send(t, req)
			if r.status != tt.status {
				t.Errorf("got %d %s, want %d", r.status, r.body, tt.status)
			}
			checkWireError(t, tt.path, r)
		})
	}
}

// checkWireError fails unless r's body is an error in the shape of path's wire: Anthropic's
// for message batches, else OpenAI's.
func checkWireError(t *testing.T, path string, r reply) {
	t.Helper()
	var e struct {
		Type  string
		Error struct{ Type, Message string }
	}
	if err := json.Unmarshal(r.body, &e); err != nil || e.Error.Type == "" || e.Error.Message == "" {
		t.Errorf("got %s, want an error object", r.body)
	}
	if strings.HasPrefix(path, "/v1/messages/batches") && (e.Type != "error" || r.header.Get("Request-Id") == "") {
		t.Errorf("got %s (request-id %q), want Anthropic's error shape", r.body, r.header.Get("Request-Id"))
	}
	if !strings.HasPrefix(path, "/v1/messages/batches") && !strings.Contains(string(r.body), `"param"`) {
		t.Errorf("got %s, want OpenAI's error shape (param, code)", r.body)
	}
}

// fileForm is an upload's multipart body (boundary B): purpose batch, a file holding content.
func fileForm(content string) string {
	return "--B\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n" +
		"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"in.jsonl\"\r\n\r\n" + content + "\r\n--B--\r\n"
}

// idOf is an object id as the gateway makes them: prefix, then the base64url of raw.
func idOf(prefix, raw string) string {
	return prefix + base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// cut is body less its last n bytes.
func cut(body string, n int) string { return body[:len(body)-n] }

// msgBatchBody is a message batch of one request of model (and text, "hi" when none).
func msgBatchBody(model string, text ...string) string {
	s := "hi"
	if len(text) > 0 {
		s = text[0]
	}
	return `{"requests":[{"custom_id":"a","params":{"model":"` + model + `","max_tokens":8,"messages":[{"role":"user","content":"` + s + `"}]}}]}`
}
