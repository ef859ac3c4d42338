package server_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

// capture is an upstream that answers every call with a recorded stream and keeps the body
// of the last one.
type capture struct {
	mu   sync.Mutex
	last []byte
}

func (c *capture) serve(t *testing.T, answer string) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.last = b
		c.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, answer)
	}))
	t.Cleanup(s.Close)
	return s
}

// member is the raw value of the last body's top-level member name, "" when absent.
func (c *capture) member(t *testing.T, name string) string {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(c.last, &m); err != nil {
		t.Fatalf("upstream body %q: %v", c.last, err)
	}
	return string(m[name])
}

func recorded(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile("../provider/openai/testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// derivedKey is the prompt_cache_key the OpenAI adapter derives from a conversation key.
func derivedKey(session string) string {
	h := sha256.Sum256([]byte(session))
	return `"sluice-` + hex.EncodeToString(h[:16]) + `"`
}

// The conversation key of every wire, with the X-Sluice-Session header first, reaches an
// OpenAI target as a prompt_cache_key derived from it; an openai-compatible one gets none.
func TestSessionHeaderPrecedence(t *testing.T) {
	var chat, resp, compat capture
	cs, rs, ks := chat.serve(t, recorded(t, "openai-chat-text.sse")), resp.serve(t, recorded(t, "openai-responses-text.sse")),
		compat.serve(t, recorded(t, "openai-chat-text.sse"))
	gs := serveConfig(t, `
providers:
  oai: {kind: openai, base_url: "${CHAT}/v1", api_key: sk-test}
  oair: {kind: openai, api: responses, base_url: "${RESP}/v1", api_key: sk-test}
  vllm: {kind: openai-compatible, base_url: "${COMPAT}/v1"}
models:
  chat: [oai/gpt-4o]
  resp: [oair/gpt-5]
  compat: [vllm/llama]
`, map[string]string{"CHAT": cs.URL, "RESP": rs.URL, "COMPAT": ks.URL})
	t.Cleanup(gs.Close)
	tests := []struct {
		name, path, body, header string
		up                       *capture
		want                     string
	}{
		{name: "chat user", path: "/v1/chat/completions", body: chatBody("chat", true, `,"user":"u1"`), up: &chat, want: derivedKey("u1")},
		{name: "chat header over user", path: "/v1/chat/completions", body: chatBody("chat", true, `,"user":"u1"`), header: "conv-9",
			up: &chat, want: derivedKey("conv-9")},
		{name: "chat own key as it is", path: "/v1/chat/completions", body: chatBody("chat", true, `,"prompt_cache_key":"k1"`),
			header: "conv-9", up: &chat, want: `"k1"`},
		{name: "chat none", path: "/v1/chat/completions", body: chatBody("chat", true, ""), up: &chat},
		{name: "responses header", path: "/v1/responses", body: respBody("resp", true, `,"user":"u1"`), header: "conv-9",
			up: &resp, want: derivedKey("conv-9")},
		{name: "responses user", path: "/v1/responses", body: respBody("resp", true, `,"user":"u1"`), up: &resp, want: derivedKey("u1")},
		{name: "messages header", path: "/v1/messages", header: "conv-9", up: &chat, want: derivedKey("conv-9"),
			body: `{"model":"chat","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`},
		{name: "compatible gets no derived key", path: "/v1/chat/completions", body: chatBody("compat", true, `,"user":"u1"`),
			header: "conv-9", up: &compat},
		{name: "compatible gets the client's key", path: "/v1/chat/completions", body: chatBody("compat", true, `,"prompt_cache_key":"k1"`),
			up: &compat, want: `"k1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", gs.URL+tt.path, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			if tt.header != "" {
				req.Header.Set("X-Sluice-Session", tt.header)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				t.Fatalf("status %d: %s", res.StatusCode, b)
			}
			if got := tt.up.member(t, "prompt_cache_key"); got != tt.want {
				t.Errorf("prompt_cache_key: got %s, want %s", got, tt.want)
			}
		})
	}
}

// anthropicCached is an Anthropic stream whose usage reports 10 new input tokens, 100 read
// from the cache and 50 written to it.
const anthropicCached = "event: message_start\n" +
	`data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"stop_sequence":null,` +
	`"usage":{"input_tokens":10,"cache_creation_input_tokens":50,"cache_read_input_tokens":100,"output_tokens":1}}}` + "\n\n" +
	"event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
	"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}` + "\n\n" +
	"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":0}` + "\n\n" +
	"event: message_delta\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}` + "\n\n" +
	"event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n"

// A Chat or Responses client sees an Anthropic target's cache reads as cached_tokens, and its
// prompt tokens include the reads and the writes (issue 46).
func TestCachedTokensFromAnthropic(t *testing.T) {
	var up capture
	us := up.serve(t, anthropicCached)
	gs := serveConfig(t, `
providers:
  anth: {kind: anthropic, base_url: "${U}", api_key: sk-ant-test}
models:
  claude: [anth/claude-x]
`, map[string]string{"U": us.URL})
	t.Cleanup(gs.Close)
	type usage struct {
		Prompt  int `json:"prompt_tokens"`
		Input   int `json:"input_tokens"`
		Details struct {
			Cached int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		InDetails struct {
			Cached int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
	}
	tests := []struct {
		name, path, body string
		stream           bool // usage in the last frame that has one, else the body's
	}{
		{name: "chat plain", path: "/v1/chat/completions", body: chatBody("claude", false, "")},
		{name: "chat stream", path: "/v1/chat/completions", body: chatBody("claude", true, `,"stream_options":{"include_usage":true}`), stream: true},
		{name: "responses plain", path: "/v1/responses", body: respBody("claude", false, "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := postTo(t, gs.URL, tt.path, tt.body)
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			raw := lastMember(t, "data: "+string(b), "usage")
			if tt.stream {
				raw = lastMember(t, string(b), "usage")
			}
			var u usage
			if err := json.Unmarshal(raw, &u); err != nil {
				t.Fatal(err)
			}
			prompt, cached := u.Prompt+u.Input, u.Details.Cached+u.InDetails.Cached
			if prompt != 160 || cached != 100 {
				t.Errorf("got prompt %d cached %d, want 160 (10 + 100 read + 50 written) and 100 in %s", prompt, cached, b)
			}
		})
	}
}

// lastMember is the member name of the last SSE frame of body that has one (a plain body is
// one frame once "data: " is put before it).
func lastMember(t *testing.T, body, name string) json.RawMessage {
	t.Helper()
	var v json.RawMessage
	for _, line := range strings.Split(body, "\n") {
		d, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(d), &m) == nil && len(m[name]) > 0 && string(m[name]) != "null" {
			v = m[name]
		}
	}
	if v == nil {
		t.Fatalf("no %s in %s", name, body)
	}
	return v
}
