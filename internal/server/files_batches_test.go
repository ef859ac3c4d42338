package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
)

// objectsUpstream is OpenAI's files and batches and Anthropic's message batches, in memory,
// enough for objects to be made and got; its errors quote its key, which must never reach a
// client.
func objectsUpstream(t *testing.T) *httptest.Server {
	var mu sync.Mutex
	kept := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		n, _ := io.Copy(io.Discard, r.Body)
		var id string
		switch {
		case r.Method == "POST" && r.URL.Path == "/v1/files":
			id = fmt.Sprintf("file-u%d", len(kept))
			kept[id] = fmt.Sprintf(`{"id":%q,"object":"file","bytes":%d,"purpose":"batch"}`, id, n)
		case r.Method == "POST" && r.URL.Path == "/v1/batches":
			id = fmt.Sprintf("batch_u%d", len(kept))
			kept[id] = fmt.Sprintf(`{"id":%q,"object":"batch","status":"validating","input_file_id":"file-u0"}`, id)
		case r.Method == "POST" && r.URL.Path == "/v1/messages/batches":
			id = fmt.Sprintf("msgbatch_u%d", len(kept))
			kept[id] = fmt.Sprintf(`{"id":%q,"type":"message_batch","processing_status":"in_progress","results_url":null}`, id)
		default:
			parts := strings.Split(r.URL.Path, "/")
			id = parts[len(parts)-1]
		}
		if b, ok := kept[id]; ok {
			io.WriteString(w, b)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":{"message":"not found for key sk-objects-SECRET","type":"invalid_request_error"}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Files through the whole edge: the key's upload, another key's 404 in OpenAI's shape and
// Anthropic's for a message batch, bad input 4xx, never the upstream's key (issue 48).
func TestFilesThroughTheEdge(t *testing.T) {
	alice, bob := auth.NewSecret(), auth.NewSecret()
	up := objectsUpstream(t)
	url := serveGate(t, `
providers:
  oa: {kind: openai, base_url: "${UP}/v1", api_key: sk-objects-SECRET}
  an: {kind: anthropic, base_url: "${UP}", api_key: sk-objects-SECRET}
models:
  batchy: [oa/gpt-4o-mini]
  claude: [an/claude-sonnet-4-5]
files: {model: batchy, max_upload: 1KiB}
keys:
  - {name: alice, hash: `+auth.Hash(alice)+`, models: ["*"]}
  - {name: bob, hash: `+auth.Hash(bob)+`, models: ["*"]}
`, map[string]string{"UP": up.URL}, time.Minute, nil)

	upload := func(key, content string) reply {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		fw, _ := mw.CreateFormFile("file", "in.jsonl")
		io.WriteString(fw, content)
		mw.WriteField("purpose", "batch")
		mw.Close()
		req, _ := http.NewRequest("POST", url+"/v1/files", &b)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Authorization", "Bearer "+key)
		return send(t, req)
	}
	r := upload(alice, "{\"custom_id\":\"a\"}\n")
	id := jsonField(r.body, "id")
	if r.status != 200 || !strings.HasPrefix(id, "file-") || id == "file-u0" {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}
	if g := do(t, "GET", url+"/v1/files/"+id, alice, ""); g.status != 200 || jsonField(g.body, "id") != id {
		t.Errorf("alice's get: %d %s", g.status, g.body)
	}
	if g := do(t, "GET", url+"/v1/files/"+id, bob, ""); g.status != 404 || !strings.Contains(string(g.body), `"invalid_request_error"`) {
		t.Errorf("bob's get: %d %s, want OpenAI's 404", g.status, g.body)
	}
	if g := upload(alice, strings.Repeat("x", 4096)); g.status != 413 {
		t.Errorf("oversize: %d %s", g.status, g.body)
	}
	if g := do(t, "POST", url+"/v1/files", alice, `{"file":"x"}`); g.status != 400 {
		t.Errorf("JSON upload: %d %s", g.status, g.body)
	}
	if g := do(t, "GET", url+"/v1/messages/batches/msgbatch_nope", alice, ""); g.status != 404 || !strings.Contains(string(g.body), `"not_found_error"`) {
		t.Errorf("unknown message batch: %d %s, want Anthropic's 404", g.status, g.body)
	}
	if g := do(t, "POST", url+"/v1/batches", bob, `{"input_file_id":"`+id+`","endpoint":"/v1/chat/completions"}`); g.status != 404 ||
		strings.Contains(string(g.body), "SECRET") {
		t.Errorf("bob's batch of alice's file: %d %s", g.status, g.body)
	}
}

// jsonField is a string member of a JSON object ("": none).
func jsonField(body []byte, name string) string {
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	s, _ := m[name].(string)
	return s
}
