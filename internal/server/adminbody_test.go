package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The admin API decodes its bodies as strictly as /v1: anything but exactly one JSON object
// in UTF-8 is a 400 naming the problem, and creates or changes nothing (a lenient decoder
// took null for {}: a key for every model).
func TestAdminStrictBody(t *testing.T) {
	const admin = "admin-token-for-tests"
	url := serveGate(t, simConfig+"auth: {admin_token: "+admin+"}\n", nil, time.Minute, nil)
	id, _ := createKey(t, url, admin, `{"name":"kept","models":["fast"]}`)
	sc := newSpecCheck(t, &gateway{url: url})
	bad := []struct{ name, body, want string }{
		{"null", `null`, "must be a JSON object"},
		{"array", `[{"name":"x"}]`, "must be a JSON object"},
		{"string", `"x"`, "must be a JSON object"},
		{"trailing data", `{"name":"x"} x`, "data after the top-level object"},
		{"two objects", `{"name":"x"}{"name":"y"}`, "data after the top-level object"},
		{"invalid UTF-8", "{\"name\":\"a\xffb\"}", "invalid UTF-8 (at byte 10)"},
		{"truncated", `{"name":`, "unexpected end of JSON input"},
		{"duplicate member", `{"models":["fast"],"models":["*"]}`, "Duplicate field 'models'"},
		{"unknown member", `{"nmae":"x"}`, `unknown field "nmae"`},
		{"empty", ``, "unexpected end of JSON input"},
	}
	for _, method := range []string{"POST", "PATCH"} {
		path := "/admin/keys"
		if method == "PATCH" {
			path += "/" + id
		}
		for _, tt := range bad {
			t.Run(method+"/"+tt.name, func(t *testing.T) {
				x := sc.do(t, method, path, tt.body, "Authorization", "Bearer "+admin)
				sc.response(t, x)
				r := reply{status: x.resp.StatusCode, body: x.body}
				var e struct {
					Error struct{ Message, Type string } `json:"error"`
				}
				_ = json.Unmarshal(r.body, &e)
				if r.status != 400 || e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, tt.want) {
					t.Errorf("got %d %s, want 400 invalid_request_error naming %q", r.status, r.body, tt.want)
				}
			})
		}
	}
	r := do(t, "GET", url+"/admin/keys", admin, "")
	var l struct {
		Data []struct {
			ID, Name string
			Models   []string
		}
	}
	if err := json.Unmarshal(r.body, &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Data) != 1 || l.Data[0].ID != id || l.Data[0].Name != "kept" || strings.Join(l.Data[0].Models, ",") != "fast" {
		t.Errorf("got keys %+v, want only the first, unchanged", l.Data)
	}
}

// /v1 refuses a body that is not UTF-8, as it refuses malformed JSON, on every wire.
func TestV1InvalidUTF8(t *testing.T) {
	url := serveGate(t, simConfig, nil, time.Minute, nil)
	for _, tt := range []struct{ path, body string }{
		{"/v1/chat/completions", "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"a\xc3\"}]}"},
		{"/v1/responses", "{\"model\":\"default\",\"input\":\"a\xc3\"}"},
		{"/v1/embeddings", "{\"model\":\"e\",\"input\":\"a\xc3\"}"},
		{"/v1/ui/chat", "{\"model\":\"default\",\"id\":\"c1\",\"messages\":[{\"id\":\"m\",\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"a\xc3\"}]}]}"},
	} {
		r := do(t, "POST", url+tt.path, "", tt.body)
		if r.status != 400 || !strings.Contains(string(r.body), "invalid UTF-8") {
			t.Errorf("%s: got %d %s, want 400 naming invalid UTF-8", tt.path, r.status, r.body)
		}
	}
}

// The admin API holds a key's metadata to the caps the configuration's keys have (auth's:
// 16 pairs, keys of 1 to 64 bytes, values of at most 512): at the caps a key is made, one
// over is a 400 on metadata.
func TestAdminMetadataCaps(t *testing.T) {
	const admin = "admin-token-for-tests"
	url := serveGate(t, simConfig+"auth: {admin_token: "+admin+"}\n", nil, time.Minute, nil)
	meta := func(pairs, key, value int) string {
		m := map[string]string{}
		for i := range pairs {
			m[fmt.Sprintf("%0*d", key, i)] = strings.Repeat("v", value)
		}
		b, _ := json.Marshal(map[string]any{"name": "m", "models": []string{"*"}, "metadata": m})
		return string(b)
	}
	if r := do(t, "POST", url+"/admin/keys", admin, meta(16, 64, 512)); r.status != 201 {
		t.Errorf("at the caps: got %d %s, want 201", r.status, r.body)
	}
	for name, body := range map[string]string{"17 pairs": meta(17, 2, 1), "a 65-byte key": meta(1, 65, 1),
		"a 513-byte value": meta(1, 1, 513)} {
		var e struct {
			Error struct{ Param string } `json:"error"`
		}
		r := do(t, "POST", url+"/admin/keys", admin, body)
		if _ = json.Unmarshal(r.body, &e); r.status != 400 || e.Error.Param != "metadata" {
			t.Errorf("%s: got %d %s, want 400 on metadata", name, r.status, r.body)
		}
	}
}
