package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestObjectsNodeSDK runs the official SDKs against the endpoints of issue 48: the OpenAI SDK
// (objects.test.mjs) against the embedded default, as `make run` serves it with no key (files
// and the emulated batch-sim alias, audio, images, moderations on sim), and the Anthropic SDK
// (msgbatches.test.mjs) against message batches passed to msgBatchUpstream.
func TestObjectsNodeSDK(t *testing.T) {
	bin := node(t)
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	gw := serveDefault(t, false, nil)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	up := msgBatchUpstream(t)
	anth := serveYAML(t, `
providers:
  anth: {kind: anthropic, base_url: "${UP}", api_key: sk-ant-e2e}
models:
  claude: [anth/claude-sonnet-4-5]
files: {anthropic_model: claude}
`, map[string]string{"UP": up.URL}, log)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--test", "--test-reporter=spec", "objects.test.mjs", "msgbatches.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SLUICE_URL="+gw.URL, "SLUICE_ANTHROPIC_URL="+anth, "NODE_NO_WARNINGS=1")
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("the SDK tests failed: %v", err)
	}
}

// msgBatchUpstream is Anthropic's Message Batches API in memory (create, list, get, cancel,
// results, delete), as api.anthropic.com answers it: a batch is in_progress at its creation
// and at its first get, ended after; each succeeded result echoes its request's last user
// message and names the model it was sent as; a request whose custom_id starts with "bad"
// is errored. It refuses a call without the gateway's provider key or anthropic-version.
func msgBatchUpstream(t *testing.T) *httptest.Server {
	type request struct {
		CustomID string `json:"custom_id"`
		Params   struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		} `json:"params"`
	}
	type batch struct {
		requests []request
		gets     int
		canceled bool
	}
	var mu sync.Mutex
	batches := map[string]*batch{}
	var order []string
	fail := func(w http.ResponseWriter, status int, typ, msg string) {
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%q},"request_id":"req_mock"}`, typ, msg)
	}
	object := func(id string, b *batch) map[string]any {
		counts := map[string]int{"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
		status, results, ended := "in_progress", any(nil), any(nil)
		if b.gets > 1 || b.canceled {
			status, ended = "ended", "2026-12-06T10:00:05Z"
			results = "https://api.anthropic.com/v1/messages/batches/" + id + "/results"
			for _, q := range b.requests {
				switch {
				case b.canceled:
					counts["canceled"]++
				case strings.HasPrefix(q.CustomID, "bad"):
					counts["errored"]++
				default:
					counts["succeeded"]++
				}
			}
		} else {
			counts["processing"] = len(b.requests)
		}
		return map[string]any{"id": id, "type": "message_batch", "processing_status": status, "request_counts": counts,
			"ended_at": ended, "created_at": "2026-12-06T10:00:00Z", "expires_at": "2026-12-07T10:00:00Z",
			"archived_at": nil, "cancel_initiated_at": nil, "results_url": results}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("request-id", "req_mock")
		if r.Header.Get("x-api-key") != "sk-ant-e2e" || r.Header.Get("anthropic-version") == "" {
			fail(w, 401, "authentication_error", "invalid x-api-key")
			return
		}
		p := strings.TrimPrefix(r.URL.Path, "/v1/messages/batches")
		id, tail, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
		b := batches[id]
		switch {
		case r.Method == "POST" && p == "":
			var body struct {
				Requests []request `json:"requests"`
			}
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Requests) == 0 {
				fail(w, 400, "invalid_request_error", "requests: expected a non-empty list")
				return
			}
			id = fmt.Sprintf("msgbatch_01Mock%d", len(batches)+1)
			batches[id], order = &batch{requests: body.Requests}, append(order, id)
			json.NewEncoder(w).Encode(object(id, batches[id]))
		case r.Method == "GET" && p == "":
			data := []any{}
			for i := len(order) - 1; i >= 0; i-- {
				data = append(data, object(order[i], batches[order[i]]))
			}
			first, last := any(nil), any(nil)
			if len(order) > 0 {
				first, last = order[len(order)-1], order[0]
			}
			json.NewEncoder(w).Encode(map[string]any{"data": data, "has_more": false, "first_id": first, "last_id": last})
		case b == nil:
			fail(w, 404, "not_found_error", "batch not found")
		case r.Method == "GET" && tail == "":
			b.gets++
			json.NewEncoder(w).Encode(object(id, b))
		case r.Method == "POST" && tail == "cancel":
			b.canceled = true
			json.NewEncoder(w).Encode(object(id, b))
		case r.Method == "DELETE" && tail == "":
			delete(batches, id)
			fmt.Fprintf(w, `{"id":%q,"type":"message_batch_deleted"}`, id)
		case r.Method == "GET" && tail == "results" && (b.gets > 1 || b.canceled):
			w.Header().Set("Content-Type", "application/binary")
			enc := json.NewEncoder(w)
			for i, q := range b.requests {
				var result any
				switch {
				case b.canceled:
					result = map[string]any{"type": "canceled"}
				case strings.HasPrefix(q.CustomID, "bad"):
					result = map[string]any{"type": "errored", "error": map[string]any{"type": "error",
						"error": map[string]any{"type": "invalid_request_error", "message": "bad request"}}}
				default:
					text := ""
					if n := len(q.Params.Messages); n > 0 {
						text, _ = q.Params.Messages[n-1].Content.(string)
					}
					result = map[string]any{"type": "succeeded", "message": map[string]any{
						"id": fmt.Sprintf("msg_mock%d", i), "type": "message", "role": "assistant", "model": q.Params.Model,
						"content":     []any{map[string]any{"type": "text", "text": text}},
						"stop_reason": "end_turn", "stop_sequence": nil,
						"usage": map[string]any{"input_tokens": 10 + i, "output_tokens": 5 + i}}}
				}
				enc.Encode(map[string]any{"custom_id": q.CustomID, "result": result})
			}
		default:
			fail(w, 404, "not_found_error", "not found")
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}
