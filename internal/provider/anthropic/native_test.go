package anthropic

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// A Messages client's own body goes to the upstream as it came, with the target's model and
// stream: true, and the client's anthropic-beta and anthropic-version headers; count_tokens
// gets it without stream and max_tokens.
func TestNativeBody(t *testing.T) {
	var paths []string
	var bodies []map[string]json.RawMessage
	var headers []http.Header
	var u *upstream
	u = newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		b, _, _ := u.Last() // the recorder read the body
		var m map[string]json.RawMessage
		json.Unmarshal(b, &m)
		paths, bodies, headers = append(paths, r.URL.Path), append(bodies, m), append(headers, r.Header.Clone())
		if r.URL.Path == "/v1/messages/count_tokens" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"input_tokens":42}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"x\"}}\n\n"+
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	})
	c := u.client(Config{})
	body := `{"model":"alias","max_tokens":9,"system":[{"type":"text","text":"<s>","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"a+b/=="}]}],"x_future":1}`
	req := testRequest()
	req.Native = &llm.Native{Wire: "anthropic", Body: json.RawMessage(body), Header: map[string]string{"Anthropic-Beta": "b1", "Anthropic-Version": "2099-01-01"}}
	st, err := c.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	n, err := c.CountTokens(context.Background(), req, "claude-x")
	if err != nil || n != 42 {
		t.Fatalf("count: got %d %v", n, err)
	}
	var want map[string]json.RawMessage
	json.Unmarshal([]byte(body), &want)
	for k, v := range want {
		if k != "model" && string(bodies[0][k]) != string(v) {
			t.Errorf("%s: got %s, want %s", k, bodies[0][k], v)
		}
	}
	if string(bodies[0]["model"]) != `"claude-sonnet-4-5"` || string(bodies[0]["stream"]) != "true" {
		t.Errorf("got model %s stream %s", bodies[0]["model"], bodies[0]["stream"])
	}
	if h := headers[0]; h.Get("Anthropic-Beta") != "b1" || h.Get("Anthropic-Version") != "2099-01-01" || h.Get("X-Api-Key") != testKey {
		t.Errorf("got headers %v", h)
	}
	if paths[1] != "/v1/messages/count_tokens" || string(bodies[1]["model"]) != `"claude-x"` || bodies[1]["max_tokens"] != nil || bodies[1]["stream"] != nil || string(bodies[1]["x_future"]) != "1" {
		t.Errorf("count_tokens got %s %v", paths[1], bodies[1])
	}
}

// Thinking without a signature (a Chat target's reasoning the client hands back) is left
// out, as the API would refuse it; the rest of the conversation goes as it came.
func TestNativeBodyUnsigned(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":""},{"type":"text","text":"<ok>","cache_control":{"type":"ephemeral"}}]},{"role":"assistant","content":[{"type":"thinking","thinking":"only"}]},{"role":"user","content":"more"}]}`
	b, _, err := nativeBody(json.RawMessage(body), "x")
	if err != nil {
		t.Fatal(err)
	}
	want := `"messages":[{"content":"hi","role":"user"},{"content":[{"type":"text","text":"<ok>","cache_control":{"type":"ephemeral"}}],"role":"assistant"},{"content":"more","role":"user"}]`
	if !strings.Contains(string(b), want) {
		t.Errorf("got %s, want %s", b, want)
	}
	signed := `{"model":"m","messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"}]}]}`
	if b, _, _ := nativeBody(json.RawMessage(signed), "x"); !strings.Contains(string(b), `"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"}]}]`) {
		t.Errorf("signed: got %s, want the messages untouched", b)
	}
}
