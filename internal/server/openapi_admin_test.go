package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestOpenAPIAdminAndGate checks the admin API and what the gate answers (401, 403, 429 with
// the x-ratelimit headers, and the headers on a 200) against the document.
func TestOpenAPIAdminAndGate(t *testing.T) {
	url := serveGate(t, simConfig+"auth: {admin_token: adm-token}\n", nil, time.Hour, nil)
	sc := newSpecCheck(t, &gateway{url: url})
	call := func(method, path, key, body string, status int) *exchange {
		t.Helper()
		req, _ := http.NewRequest(method, url+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		x := sc.send(t, req, body)
		if x.resp.StatusCode != status {
			t.Fatalf("%s %s: got %d %s, want %d", method, path, x.resp.StatusCode, x.body, status)
		}
		if err := sc.validRequest(t, x); err != nil {
			t.Errorf("%s %s: got a request the spec rejects: %v", method, path, err)
		}
		sc.response(t, x)
		return x
	}
	id, key := createKey(t, url, "adm-token", `{"name":"spec","models":["default"],"rpm":1,"tpm":100000}`)
	call("POST", "/admin/keys", "adm-token", `{"name":"other","metadata":{"team":"a"}}`, 201)
	call("GET", "/admin/keys", "adm-token", "", 200)
	call("GET", "/admin/keys/"+id, "adm-token", "", 200)
	call("PATCH", "/admin/keys/"+id, "adm-token", `{"name":"spec-2"}`, 200)
	call("GET", "/admin/keys", "", "", 401)
	call("GET", "/admin/keys/key_000000000000000000000000", "adm-token", "", 404)

	chat := `{"model":"default","messages":[{"role":"user","content":"hi"}]}`
	ok := call("POST", "/v1/chat/completions", key, chat, 200)
	if ok.resp.Header.Get("X-Ratelimit-Limit-Requests") != "1" {
		t.Errorf("x-ratelimit-limit-requests %q on a 200, want 1", ok.resp.Header.Get("X-Ratelimit-Limit-Requests"))
	}
	call("POST", "/v1/chat/completions", key, chat, 429)
	call("POST", "/v1/chat/completions", "", chat, 401)
	call("POST", "/v1/chat/completions", key, strings.Replace(chat, "default", "fast", 1), 403)
	call("DELETE", "/admin/keys/"+id, "adm-token", "", 200)
	call("POST", "/v1/chat/completions", key, chat, 401)
}
