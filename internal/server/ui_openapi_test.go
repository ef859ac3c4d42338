package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

func TestOpenAPIUIDocument(t *testing.T) {
	doc := loadSpec(t)
	for _, p := range []string{"/v1/ui/chat", "/v1/ui/chat/{chatId}/stream", "/v1/ui/chat/{chatId}/stop"} {
		if doc.Paths.Value(p) == nil {
			t.Errorf("got no path %s, want one", p)
		}
	}
	for _, s := range []string{"UIChatRequest", "UIMessage", "UIMessageChunk", "UIRunStopping"} {
		if doc.Components.Schemas[s] == nil {
			t.Errorf("got no schema %s, want one", s)
		}
	}
}

const uiSpecConfig = baseConfig + `
  tools: ["mock/tools?calls=1&say=Checking."]
  reason: ["mock/reason?think=20"]
  restart:
    targets: ["mock/text?len=80&fail=cut&after=3", "mock/text?len=20"]
    on_midstream_failure: restart
  norestart: ["mock/text?len=80&fail=cut&after=3"]
  stall: ["mock/text?len=100&fail=stall&after=3"]
  down: ["mock/text?fail=500"]
`

// Real frontend-run exchanges, checked against the document: requests, statuses, headers, and
// every chunk of every stream against UIMessageChunk.
func TestOpenAPIUI(t *testing.T) {
	g := newGateway(t, uiSpecConfig)
	sc := newSpecCheck(t, g)
	chunkSchema := sc.schema(t, "UIMessageChunk")
	full := `{"id":"chat-full","model":"tools","trigger":"submit-message","messageId":"m0","metadata":{"k":"v"},"messages":[` +
		`{"id":"s","role":"system","parts":[{"type":"text","text":"Be brief."}]},` +
		`{"id":"u1","role":"user","parts":[{"type":"text","text":"Weather?"},{"type":"file","mediaType":"image/png","url":"data:image/png;base64,iVBO"}]},` +
		`{"id":"a1","role":"assistant","parts":[{"type":"step-start"},{"type":"text","text":"Checking."},` +
		`{"type":"tool-get_weather","toolCallId":"c1","state":"output-available","input":{"city":"Paris"},"output":{"temp":18}}]},` +
		`{"id":"u2","role":"user","parts":[{"type":"text","text":"And now?"}]}],` +
		`"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}],"tool_choice":"auto",` +
		`"temperature":0.5,"max_tokens":100,"appField":true}`
	streams := []struct{ name, body, proto string }{
		{"text", uiBody("chat-a", "mock/text?len=60", "hi"), ""},
		{"every field", full, ""},
		{"reasoning", uiBody("chat-b", "reason", "hi"), ""},
		{"restart", uiBody("chat-c", "restart", "hi"), ""},
		{"restart v5", uiBody("chat-d", "restart", "hi"), "v5"},
		{"failure", uiBody("chat-e", "norestart", "hi"), "v6"},
	}
	var last *exchange
	for _, tt := range streams {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", sc.url+"/v1/ui/chat", strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			if tt.proto != "" {
				req.Header.Set("X-Sluice-Ui-Protocol", tt.proto)
			}
			x := sc.send(t, req, tt.body)
			if err := sc.validRequest(t, x); err != nil {
				t.Errorf("got a request the spec rejects: %v", err)
			}
			if x.resp.StatusCode != 200 {
				t.Fatalf("got %d %s, want 200", x.resp.StatusCode, x.body)
			}
			sc.response(t, x)
			uiChunks(t, x.body, chunkSchema)
			last = x
		})
	}
	errs := []struct {
		name, method, path, body string
		status                   int
	}{
		{"no id", "POST", "/v1/ui/chat", `{"model":"default","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"hi"}]}]}`, 400},
		{"unknown model", "POST", "/v1/ui/chat", uiBody("chat-x", "nope", "hi"), 404},
		{"chain down", "POST", "/v1/ui/chat", uiBody("chat-y", "down", "hi"), 502},
		{"resume nothing", "GET", "/v1/ui/chat/chat-none/stream", "", 204},
		{"resume finished", "GET", "/v1/ui/chat/chat-a/stream", "", 204},
		{"stop nothing", "POST", "/v1/ui/chat/chat-a/stop", "", 204},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			x := sc.do(t, tt.method, tt.path, tt.body)
			if x.resp.StatusCode != tt.status {
				t.Fatalf("got %d %s, want %d", x.resp.StatusCode, x.body, tt.status)
			}
			sc.response(t, x)
		})
	}
	t.Run("resume after an event id", func(t *testing.T) {
		fs := sseFrames(t, bytes.NewReader(last.body), -1)
		req, _ := http.NewRequest("GET", sc.url+"/v1/ui/chat/chat-e/stream", nil)
		req.Header.Set("Last-Event-ID", frameID(fs[2]))
		x := sc.send(t, req, "")
		if err := sc.validRequest(t, x); err != nil {
			t.Errorf("got a request the spec rejects: %v", err)
		}
		if x.resp.StatusCode != 200 || !bytes.Equal(x.body, []byte(strings.Join(fs[3:], ""))) {
			t.Fatalf("got %d %q, want the frames after the third", x.resp.StatusCode, x.body)
		}
		sc.response(t, x)
	})
	t.Run("stop", func(t *testing.T) {
		req, _ := http.NewRequest("POST", sc.url+"/v1/ui/chat", strings.NewReader(uiBody("chat-s", "stall", "hi")))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		sseFrames(t, resp.Body, 3)
		x := sc.do(t, "POST", "/v1/ui/chat/chat-s/stop", "")
		if x.resp.StatusCode != http.StatusAccepted {
			t.Fatalf("got %d %s, want 202", x.resp.StatusCode, x.body)
		}
		sc.response(t, x)
	})
}

// uiChunks checks every data line of a UI stream against the chunk schema, and its end.
func uiChunks(t *testing.T, body []byte, schema *openapi3.Schema) {
	t.Helper()
	fs := sseFrames(t, bytes.NewReader(body), -1)
	for i, f := range fs {
		d := frameData(f)
		if d == "[DONE]" {
			if i != len(fs)-1 {
				t.Errorf("frame %d: got [DONE] before the end", i)
			}
			continue
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(d), &v); err != nil {
			t.Fatalf("frame %d: got %s, want JSON", i, d)
		}
		if err := schema.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("frame %d: got %s, the spec rejects it: %v", i, d, err)
		}
	}
	if len(fs) == 0 || frameData(fs[len(fs)-1]) != "[DONE]" {
		t.Errorf("got a stream that does not end with [DONE]")
	}
}
