package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/mockllm"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
)

// stateFleet is two replicas sharing one Redis in front of the mock's Chat, Responses and
// Anthropic wires, with keys a and b.
func stateFleet(t *testing.T, a, b string) ([2]string, *mockllm.Server) {
	t.Helper()
	srv := redistest.Start(t)
	mock := mockllm.New(mockllm.Options{})
	ms := httptest.NewServer(mock)
	t.Cleanup(ms.Close)
	yaml := `
redis: {url: "${REDIS_URL}", timeout: 2s}
providers:
  chat: {kind: openai-compatible, base_url: "${MOCK_URL}/v1"}
  resp: {kind: openai, api: responses, base_url: "${MOCK_URL}/v1", api_key: sk-test}
  anth: {kind: anthropic, base_url: "${MOCK_URL}", api_key: sk-ant-test}
models:
  on-chat: [chat/echo]
  falls: {targets: ["chat/text?fail=error", anth/echo], ttl: 1h}
  on-resp: [resp/echo]
auth: {admin_token: admin-x}
keys:
  - {name: a, hash: ` + auth.Hash(a) + `, models: [on-chat, falls, on-resp]}
  - {name: b, hash: ` + auth.Hash(b) + `, models: [on-chat, falls, on-resp]}
`
	vars := map[string]string{"MOCK_URL": ms.URL, "REDIS_URL": srv.URL}
	return [2]string{serveGate(t, yaml, vars, time.Minute, nil), serveGate(t, yaml, vars, time.Minute, nil)}, mock
}

// stateDo sends one request with key and returns its status and body.
func stateDo(t *testing.T, method, url, key, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// turn posts one stored turn and returns the response's id and its whole stream or body.
func turn(t *testing.T, url, key, model, input, prev string, stream bool) (string, string) {
	t.Helper()
	body := `{"model":"` + model + `","input":"` + input + `","store":true,"instructions":"Be brief."`
	if prev != "" {
		body += `,"previous_response_id":"` + prev + `"`
	}
	if stream {
		body += `,"stream":true`
	}
	status, b := stateDo(t, "POST", url+"/v1/responses", key, body+"}")
	if status != 200 {
		t.Fatalf("%s: got %d %s", model, status, b)
	}
	if stream {
		evs, _ := respStream(t, strings.NewReader(string(b)))
		last := evs[len(evs)-1]
		r, _ := last.data["response"].(map[string]any)
		id, _ := r["id"].(string)
		if last.typ != "response.completed" || id == "" {
			t.Fatalf("%s: stream ended with %s, want response.completed with an id", model, last.typ)
		}
		return id, string(b)
	}
	var r struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.ID == "" {
		t.Fatalf("%s: got %s, want a Response object", model, b)
	}
	return r.ID, string(b)
}

// previous_response_id over three turns through two replicas sharing Redis: the first on a
// Chat target, the second on replica 2 after its alias's first target fails, on an
// Anthropic target, the third back on replica 1 on a Responses target. Each upstream gets
// the whole conversation in its own wire; the stored response is read, listed and deleted
// by its key only.
func TestResponsesStateAcrossReplicasAndKinds(t *testing.T) {
	a, b := auth.NewSecret(), auth.NewSecret()
	urls, mock := stateFleet(t, a, b)

	id1, _ := turn(t, urls[0], a, "on-chat", "alpha one", "", true)
	id2, _ := turn(t, urls[1], a, "falls", "beta two", id1, false)
	if n := mock.Calls("text?fail=error"); n != 1 {
		t.Errorf("turn 2: the failing Chat target got %d calls, want 1 (then the fallback)", n)
	}
	var anth struct {
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(mock.LastRequest("echo"), &anth); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range anth.Messages {
		roles = append(roles, m.Role+":"+string(m.Content))
	}
	got := strings.Join(roles, " | ")
	if len(anth.Messages) != 3 || !strings.Contains(got, "user:") || !strings.Contains(roles[0], "alpha one") ||
		!strings.HasPrefix(roles[1], "assistant:") || !strings.Contains(roles[1], "alpha one") || !strings.Contains(roles[2], "beta two") ||
		!strings.Contains(string(anth.System), "Be brief.") {
		t.Errorf("turn 2's Anthropic request: got system %s, messages %s; want turn 1's user and assistant messages then turn 2's, with the instructions", anth.System, got)
	}

	id3, out3 := turn(t, urls[0], a, "on-resp", "gamma three", id2, true)
	up := string(mock.LastRequest("echo"))
	var resp struct {
		Input        []map[string]any `json:"input"`
		Store        bool             `json:"store"`
		Instructions string           `json:"instructions"`
	}
	if err := json.Unmarshal([]byte(up), &resp); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, it := range resp.Input {
		c, _ := json.Marshal(it["content"])
		texts = append(texts, it["role"].(string)+":"+string(c))
	}
	if len(texts) != 5 || !strings.Contains(texts[0], "alpha one") || !strings.Contains(texts[2], "beta two") ||
		!strings.HasPrefix(texts[3], "assistant:") || !strings.Contains(texts[4], "gamma three") || resp.Store ||
		strings.Contains(up, "previous_response_id") || resp.Instructions != "Be brief." {
		t.Errorf("turn 3's Responses request: got %s; want the five items of the conversation, store false, no previous_response_id", up)
	}
	if !strings.Contains(out3, `"previous_response_id":"`+id2+`"`) {
		t.Errorf("turn 3's Response does not echo previous_response_id %s: %s", id2, out3)
	}

	// GET on the other replica: the Response object as the client got it.
	status, body := stateDo(t, "GET", urls[1]+"/v1/responses/"+id3, a, "")
	if status != 200 || !strings.Contains(string(body), `"id":"`+id3+`"`) || !strings.Contains(string(body), `"status":"completed"`) ||
		!strings.Contains(string(body), "gamma three") {
		t.Errorf("GET %s: got %d %s, want the Response object", id3, status, body)
	}
	status, body = stateDo(t, "GET", urls[1]+"/v1/responses/"+id3+"/input_items?order=asc&limit=2", a, "")
	var page struct {
		Object  string            `json:"object"`
		Data    []json.RawMessage `json:"data"`
		HasMore bool              `json:"has_more"`
	}
	if json.Unmarshal(body, &page) != nil || status != 200 || page.Object != "list" || len(page.Data) != 2 || !page.HasMore ||
		!strings.Contains(string(page.Data[0]), "alpha one") {
		t.Errorf("input_items: got %d %s, want the first two of five items", status, body)
	}
	// Another key: unknown, in OpenAI's shape, on every route and as a previous_response_id.
	for _, m := range []string{"GET", "DELETE"} {
		status, body = stateDo(t, m, urls[0]+"/v1/responses/"+id3, b, "")
		if status != 404 || !strings.Contains(string(body), `"type":"invalid_request_error"`) || strings.Contains(string(body), "gamma") {
			t.Errorf("%s with another key: got %d %s, want 404", m, status, body)
		}
	}
	status, body = stateDo(t, "POST", urls[0]+"/v1/responses", b, `{"model":"on-chat","input":"x","previous_response_id":"`+id3+`"}`)
	if status != 400 || !strings.Contains(string(body), `"code":"previous_response_not_found"`) {
		t.Errorf("previous_response_id of another key: got %d %s, want 400 previous_response_not_found", status, body)
	}
	// DELETE by its key, on either replica: then it is gone everywhere.
	status, body = stateDo(t, "DELETE", urls[0]+"/v1/responses/"+id3, a, "")
	if status != 200 || string(body) != `{"id":"`+id3+`","object":"response","deleted":true}` {
		t.Errorf("DELETE: got %d %s, want OpenAI's deletion object", status, body)
	}
	for _, path := range []string{"/v1/responses/" + id3, "/v1/responses/resp_nothing"} {
		status, body = stateDo(t, "GET", urls[1]+path, a, "")
		if status != 404 || !strings.Contains(string(body), "not found") {
			t.Errorf("GET %s: got %d %s, want 404", path, status, body)
		}
	}
	// The earlier turns stay: each keeps its own conversation.
	if status, _ = stateDo(t, "GET", urls[1]+"/v1/responses/"+id2, a, ""); status != 200 {
		t.Errorf("GET %s after deleting %s: got %d, want 200", id2, id3, status)
	}
}

// A chain of stored responses is one conversation (issue 46): from its second request on,
// the upstream gets one prompt_cache_key for the whole chain, on either replica, derived
// from the chain (its first response), not from a request's own user field.
func TestResponsesChainSession(t *testing.T) {
	urls, mock := stateFleet(t, "sk-sluice-chain-a", "sk-sluice-chain-b")
	key := func() string {
		var b struct {
			Key string `json:"prompt_cache_key"`
		}
		json.Unmarshal(mock.LastRequest("echo"), &b)
		return b.Key
	}
	id1, _ := turn(t, urls[0], "sk-sluice-chain-a", "on-resp", "one", "", false)
	id2, _ := turn(t, urls[1], "sk-sluice-chain-a", "on-resp", "two", id1, false)
	k2 := key()
	_, _ = turn(t, urls[0], "sk-sluice-chain-a", "on-resp", "three", id2, true)
	k3 := key()
	if !strings.HasPrefix(k2, "sluice-") || k2 != k3 {
		t.Errorf("the chain's turns got prompt_cache_key %q and %q, want one sluice- key", k2, k3)
	}
	// Another chain is another conversation.
	other, _ := turn(t, urls[1], "sk-sluice-chain-a", "on-resp", "one", "", false)
	turn(t, urls[0], "sk-sluice-chain-a", "on-resp", "two", other, false)
	if k := key(); k == k2 || !strings.HasPrefix(k, "sluice-") {
		t.Errorf("another chain got %q, the first %q: want a key of its own", k, k2)
	}
}
