package server_test

import (
	"strings"
	"testing"
	"time"
)

// TestOpenAPIAdminAndGate checks the admin API and what the gate answers (401, 403, 429 with
// the x-ratelimit headers, and the headers on a 200) against the document.
func TestOpenAPIAdminAndGate(t *testing.T) {
	url := serveGate(t, simConfig+"auth: {admin_token: adm-token}\n", nil, time.Hour, nil)
	sc := newSpecCheck(t, &gateway{url: url})
	id, key := createKey(t, url, "adm-token", `{"name":"spec","models":["default"],"rpm":1,"tpm":100000}`)
	sc.call(t, "POST", "/admin/keys", "adm-token", `{"name":"other","metadata":{"team":"a"}}`, 201)
	sc.call(t, "GET", "/admin/keys", "adm-token", "", 200)
	sc.call(t, "GET", "/admin/keys/"+id, "adm-token", "", 200)
	sc.call(t, "PATCH", "/admin/keys/"+id, "adm-token", `{"name":"spec-2"}`, 200)
	sc.call(t, "GET", "/admin/keys", "", "", 401)
	sc.call(t, "GET", "/admin/keys/key_000000000000000000000000", "adm-token", "", 404)

	chat := `{"model":"default","messages":[{"role":"user","content":"hi"}]}`
	ok := sc.call(t, "POST", "/v1/chat/completions", key, chat, 200)
	if ok.resp.Header.Get("X-Ratelimit-Limit-Requests") != "1" {
		t.Errorf("x-ratelimit-limit-requests %q on a 200, want 1", ok.resp.Header.Get("X-Ratelimit-Limit-Requests"))
	}
	sc.call(t, "POST", "/v1/chat/completions", key, chat, 429)
	sc.call(t, "POST", "/v1/chat/completions", "", chat, 401)
	sc.call(t, "POST", "/v1/chat/completions", key, strings.Replace(chat, "default", "fast", 1), 403)
	sc.call(t, "DELETE", "/admin/keys/"+id, "adm-token", "", 200)
	sc.call(t, "POST", "/v1/chat/completions", key, chat, 401)
	sc.call(t, "GET", "/admin/audit?resource_kind=key&limit=2", "adm-token", "", 200) // the changes above
	sc.call(t, "GET", "/admin/audit?from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z", "adm-token", "", 400) // from after to
}
