package server_test

import (
	"encoding/json"
	"fmt"
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
	sc.call(t, "GET", "/admin/audit?resource_kind=key&limit=2", "adm-token", "", 200)                         // the changes above
	sc.call(t, "GET", "/admin/audit?from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z", "adm-token", "", 400) // from after to

	// Users and personal tokens; a viewer's token reads its team's keys, changes nothing,
	// and is refused config-wide routes; another team's key is a 404.
	var u, tok struct{ ID, Token string }
	sc.call(t, "POST", "/admin/teams", "adm-token", `{"name":"a"}`, 201) // keys join teams there are
	sc.call(t, "POST", "/admin/teams", "adm-token", `{"name":"b"}`, 201)
	decode(t, sc.call(t, "POST", "/admin/users", "adm-token", `{"email":"v@example.com","role":"viewer","teams":["a"]}`, 201).body, &u)
	sc.call(t, "GET", "/admin/users", "adm-token", "", 200)
	sc.call(t, "GET", "/admin/users/"+u.ID, "adm-token", "", 200)
	sc.call(t, "PATCH", "/admin/users/"+u.ID, "adm-token", `{"name":"Vic"}`, 200)
	decode(t, sc.call(t, "POST", "/admin/users/"+u.ID+"/tokens", "adm-token", `{"name":"ci"}`, 201).body, &tok)
	sc.call(t, "GET", "/admin/users/"+u.ID+"/tokens", tok.Token, "", 200)
	sc.call(t, "GET", "/admin/keys", tok.Token, "", 200)
	sc.call(t, "POST", "/admin/keys", tok.Token, `{"name":"x","team":"a"}`, 403)
	sc.call(t, "DELETE", "/admin/cache", tok.Token, "", 403)
	sc.call(t, "GET", "/admin/version", tok.Token, "", 403) // admin only
	other, _ := createKey(t, url, "adm-token", `{"name":"b","team":"b"}`)
	sc.call(t, "GET", "/admin/keys/"+other, tok.Token, "", 404)
	// Teams: the viewer reads theirs and its members, not another's, and changes nothing.
	sc.call(t, "GET", "/admin/teams", tok.Token, "", 200)
	sc.call(t, "GET", "/admin/teams/a", tok.Token, "", 200)
	sc.call(t, "GET", "/admin/teams/b", tok.Token, "", 404)
	sc.call(t, "GET", "/admin/teams/a/members", tok.Token, "", 200)
	sc.call(t, "PATCH", "/admin/teams/a/members", tok.Token, `{"remove":["`+u.ID+`"]}`, 403)
	sc.call(t, "PATCH", "/admin/teams/a", tok.Token, `{"rpm":1}`, 403)
	sc.call(t, "PATCH", "/admin/teams/b/members", "adm-token", `{"add":["`+u.ID+`"]}`, 200)
	sc.call(t, "PATCH", "/admin/teams/b/members", "adm-token", `{"add":["usr_000000000000000000000000"]}`, 404)
	sc.call(t, "PATCH", "/admin/teams/b/members", "adm-token", `{"add":[]}`, 400)
	sc.call(t, "GET", "/admin/users/usr_000000000000000000000000", "adm-token", "", 404)
	sc.call(t, "DELETE", "/admin/users/"+u.ID+"/tokens/"+tok.ID, "adm-token", "", 200)
	sc.call(t, "GET", "/admin/keys", tok.Token, "", 401)
	sc.call(t, "DELETE", "/admin/users/"+u.ID, "adm-token", "", 200)
	// The revoked token above was this address's first failure; 9 more, then the throttle's
	// 429 (issue 47), the admin token's too.
	for i := range 9 {
		sc.call(t, "GET", "/admin/keys", fmt.Sprint("wrong-", i), "", 401)
	}
	sc.call(t, "GET", "/admin/keys", "wrong-10", "", 429)
	sc.call(t, "GET", "/admin/keys", "adm-token", "", 429)
}

func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
}
