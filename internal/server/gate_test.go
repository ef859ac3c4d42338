package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
)

func TestAuthOff(t *testing.T) {
	url := serveGate(t, simConfig, nil, time.Minute, nil)
	if r := do(t, "POST", url+"/v1/chat/completions", "", chatBody("default", false, "")); r.status != 200 {
		t.Errorf("got %d %s without keys configured, want 200 (auth off)", r.status, r.body)
	}
	if r := do(t, "GET", url+"/admin/keys", "", ""); r.status != 404 {
		t.Errorf("got %d for the admin API without an admin token, want 404", r.status)
	}
}

func TestKeysFromConfig(t *testing.T) {
	good, old := auth.NewSecret(), auth.NewSecret()
	yaml := simConfig + `
keys:
  - {name: team-a, hash: ` + auth.Hash(good) + `, models: [default]}
  - {name: old, hash: ` + auth.Hash(old) + `, expires_at: 2020-01-01}
`
	var log logBuffer
	url := serveGate(t, yaml, nil, time.Minute, &log)
	chat := url + "/v1/chat/completions"
	tests := []struct {
		name, method, url, key, body string
		status                       int
		code                         string
	}{
		{"no key", "POST", chat, "", chatBody("default", false, ""), 401, "invalid_api_key"},
		{"wrong key", "POST", chat, auth.NewSecret(), chatBody("default", false, ""), 401, "invalid_api_key"},
		{"expired key", "POST", chat, old, chatBody("default", false, ""), 401, "invalid_api_key"},
		{"good key", "POST", chat, good, chatBody("default", false, ""), 200, ""},
		{"streamed", "POST", chat, good, chatBody("default", true, ""), 200, ""},
		{"alias not listed", "POST", chat, good, chatBody("fast", false, ""), 403, "model_not_allowed"},
		{"direct target not listed", "POST", chat, good, chatBody("sim/echo", false, ""), 403, "model_not_allowed"},
		{"models needs a key", "GET", url + "/v1/models", "", "", 401, "invalid_api_key"},
		{"models with a key", "GET", url + "/v1/models", good, "", 200, ""},
		{"healthz is open", "GET", url + "/healthz", "", "", 200, ""},
		{"readyz is open", "GET", url + "/readyz", "", "", 200, ""},
		// A path outside the route table is no route: 404, key or not. Every route of the
		// table is guarded, whoever adds it (TestRouteTable).
		{"unknown v1 path", "POST", url + "/v1/nope", "", "{}", 404, "unknown_url"},
		{"responses needs a key", "POST", url + "/v1/responses", "", `{"model":"default","input":"hi"}`, 401, "invalid_api_key"},
		{"responses model not listed", "POST", url + "/v1/responses", good, `{"model":"fast","input":"hi"}`, 403, "model_not_allowed"},
		{"embeddings needs a key", "POST", url + "/v1/embeddings", "", `{"model":"default","input":"hi"}`, 401, "invalid_api_key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, tt.method, tt.url, tt.key, tt.body)
			if r.status != tt.status || r.errCode() != tt.code {
				t.Errorf("got %d %s, want %d %s", r.status, r.body, tt.status, tt.code)
			}
			if r.status == 401 && r.header.Get("X-Should-Retry") != "" {
				t.Errorf("got x-should-retry on a 401, want none")
			}
		})
	}
	// The Anthropic SDKs send x-api-key.
	req, _ := http.NewRequest("POST", chat, strings.NewReader(chatBody("default", false, "")))
	req.Header.Set("X-Api-Key", good)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("got %d with x-api-key, want 200", resp.StatusCode)
	}
	// A body that names one model to a case-insensitive reader and another to the handler.
	sneaky := `{"model":"fast","MODEL":"default","messages":[{"role":"user","content":"hi"}]}`
	if r := do(t, "POST", chat, good, sneaky); r.status != 403 {
		t.Errorf("got %d %s for a body whose exact model member is not allowed, want 403", r.status, r.body)
	}
	logs := log.String()
	for _, secret := range []string{good, old} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log holds a key in clear")
		}
	}
	if !strings.Contains(logs, "key_name=team-a") {
		t.Errorf("got no access line naming the key team-a:\n%s", logs)
	}
}

func TestAdminAPI(t *testing.T) {
	const admin = "admin-token-for-tests"
	var log logBuffer
	url := serveGate(t, simConfig+"auth: {admin_token: "+admin+"}\n", nil, time.Minute, &log)
	for _, tok := range []string{"", "wrong", admin + "x"} {
		if r := do(t, "GET", url+"/admin/keys", tok, ""); r.status != 401 || r.errCode() != "invalid_admin_token" {
			t.Errorf("token %q: got %d %s, want 401", tok, r.status, r.body)
		}
		if r := do(t, "POST", url+"/admin/keys", tok, `{"name":"x"}`); r.status != 401 {
			t.Errorf("token %q: got %d creating a key, want 401", tok, r.status)
		}
	}
	// No key yet: auth is on (an admin token is set), so /v1 refuses.
	if r := do(t, "POST", url+"/v1/chat/completions", "", chatBody("default", false, "")); r.status != 401 {
		t.Errorf("got %d without a key, want 401", r.status)
	}
	id, secret := createKey(t, url, admin, `{"name":"team-b","models":["default"],"rpm":100,"metadata":{"team":"b"},"expires_at":"2099-01-01T00:00:00Z"}`)
	if r := do(t, "POST", url+"/v1/chat/completions", secret, chatBody("default", false, "")); r.status != 200 {
		t.Errorf("got %d %s with the new key, want 200", r.status, r.body)
	}
	r := do(t, "GET", url+"/admin/keys/"+id, admin, "")
	var k map[string]any
	_ = json.Unmarshal(r.body, &k)
	if r.status != 200 || k["name"] != "team-b" || k["rpm"] != 100.0 || k["key"] != nil || k["expires_at"] != "2099-01-01T00:00:00Z" {
		t.Errorf("GET: got %d %s, want the key without its secret", r.status, r.body)
	}
	if r := do(t, "GET", url+"/admin/keys", admin, ""); r.status != 200 || !strings.Contains(string(r.body), id) || strings.Contains(string(r.body), secret) {
		t.Errorf("list: got %d %s, want the key listed without its secret", r.status, r.body)
	}
	if r := do(t, "PATCH", url+"/admin/keys/"+id, admin, `{"models":["fast"],"expires_at":null}`); r.status != 200 ||
		!strings.Contains(string(r.body), `"models":["fast"]`) || !strings.Contains(string(r.body), `"expires_at":null`) {
		t.Errorf("PATCH: got %d %s, want models [fast], no expiry", r.status, r.body)
	}
	if r := do(t, "POST", url+"/v1/chat/completions", secret, chatBody("default", false, "")); r.status != 403 {
		t.Errorf("got %d after the patch took default away, want 403", r.status)
	}
	for _, tt := range []struct{ name, method, path, body string }{
		{"unknown field", "POST", "/admin/keys", `{"nmae":"x"}`},
		{"negative rpm", "POST", "/admin/keys", `{"rpm":-1}`},
		{"no models", "PATCH", "/admin/keys/" + id, `{"models":[]}`},
		{"past expiry", "PATCH", "/admin/keys/" + id, `{"expires_at":"2001-01-01T00:00:00Z"}`},
	} {
		if r := do(t, tt.method, url+tt.path, admin, tt.body); r.status != 400 {
			t.Errorf("%s: got %d %s, want 400", tt.name, r.status, r.body)
		}
	}
	if r := do(t, "DELETE", url+"/admin/keys/"+id, admin, ""); r.status != 200 {
		t.Errorf("DELETE: got %d %s, want 200", r.status, r.body)
	}
	if r := do(t, "GET", url+"/admin/keys/"+id, admin, ""); r.status != 404 || r.errCode() != "key_not_found" {
		t.Errorf("GET after DELETE: got %d %s, want 404 key_not_found", r.status, r.body)
	}
	if r := do(t, "POST", url+"/v1/chat/completions", secret, chatBody("fast", false, "")); r.status != 401 {
		t.Errorf("got %d with a deleted key, want 401", r.status)
	}
	if strings.Contains(log.String(), secret) || strings.Contains(log.String(), admin) {
		t.Errorf("the log holds a key or the admin token in clear")
	}
}

func TestRateLimitHeaders(t *testing.T) {
	good := auth.NewSecret()
	url := serveGate(t, simConfig+"keys: [{name: k, hash: "+auth.Hash(good)+", limits: {rpm: 2, tpm: 100000}}]\n", nil, time.Minute, nil)
	chat := url + "/v1/chat/completions"
	for i, want := range []string{"1", "0"} {
		r := do(t, "POST", chat, good, chatBody("default", i == 1, `,"max_tokens":10`))
		h := r.header
		if r.status != 200 || h.Get("X-Ratelimit-Limit-Requests") != "2" || h.Get("X-Ratelimit-Remaining-Requests") != want ||
			h.Get("X-Ratelimit-Reset-Requests") != "1m0s" || h.Get("X-Ratelimit-Limit-Tokens") != "100000" {
			t.Errorf("request %d: got %d with headers %v, want 200 with %s requests left", i, r.status, h, want)
		}
	}
	r := do(t, "POST", chat, good, chatBody("default", false, ""))
	if r.status != 429 || r.errCode() != "rate_limit_exceeded" {
		t.Fatalf("got %d %s, want 429 rate_limit_exceeded", r.status, r.body)
	}
	if ra := r.header.Get("Retry-After"); ra != "60" || r.header.Get("X-Should-Retry") != "" {
		t.Errorf("got Retry-After %q and x-should-retry %q, want 60 and none (the SDKs retry a 429 after Retry-After)",
			ra, r.header.Get("X-Should-Retry"))
	}
	if !strings.Contains(string(r.body), "key 'k' on requests per minute: limit 2") {
		t.Errorf("got %s, want a message naming the key and the limit", r.body)
	}
}

// A request whose estimate alone is over the token limit can never pass: 429 without a
// Retry-After and with x-should-retry: false.
func TestTooLargeForTokenLimit(t *testing.T) {
	good := auth.NewSecret()
	url := serveGate(t, simConfig+"keys: [{name: k, hash: "+auth.Hash(good)+", limits: {tpm: 100}}]\n", nil, time.Minute, nil)
	r := do(t, "POST", url+"/v1/chat/completions", good, chatBody("default", false, `,"max_tokens":1000`))
	if r.status != 429 || r.header.Get("X-Should-Retry") != "false" || r.header.Get("Retry-After") != "" {
		t.Errorf("got %d %v %s, want 429 with x-should-retry: false and no Retry-After", r.status, r.header, r.body)
	}
	// Without max_tokens the default answer reservation is capped by the limit: it passes.
	if r := do(t, "POST", url+"/v1/chat/completions", good, chatBody("default", false, "")); r.status != 200 {
		t.Errorf("got %d %s without max_tokens, want 200", r.status, r.body)
	}
}
