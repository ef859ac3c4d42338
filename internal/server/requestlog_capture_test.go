package server_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sluice-gw/sluice/internal/auth"
)

// captureKey is a config key whose capture is content.
const captureKey = "sk-capture-content-0123456789abcdefghij"

// What a record keeps is the key's capture, else its alias's, else logs.capture; the key's
// choice wins both ways, from the admin API and from the config.
func TestRequestLogCapturePrecedence(t *testing.T) {
	url := serveGate(t, sqliteLogs(t, "")+`
providers:
  sim: {kind: sim}
models:
  default: [sim/echo]
  captured: {targets: [sim/echo], capture: content}
  plain: {targets: [sim/echo], capture: metadata}
keys:
  - {name: config-content, hash: `+auth.Hash(captureKey)+`, capture: content}
`, nil, time.Minute, nil)
	_, none := createKey(t, url, logsAdmin, `{"name":"none"}`)
	metaID, meta := createKey(t, url, logsAdmin, `{"name":"meta","capture":"metadata"}`)
	_, content := createKey(t, url, logsAdmin, `{"name":"content","capture":"content"}`)
	for _, tt := range []struct {
		name, key, alias, want string
		patch                  string // the meta key's PATCH body, sent first ("": none)
	}{
		{"no key capture, no alias capture: logs.capture", none, "default", "metadata", ""},
		{"no key capture: the alias's content", none, "captured", "content", ""},
		{"no key capture: the alias's metadata", none, "plain", "metadata", ""},
		{"the key's metadata over the alias's content", meta, "captured", "metadata", ""},
		{"the key's content over the alias's metadata", content, "plain", "content", ""},
		{"the key's content over logs.capture", content, "default", "content", ""},
		{"a config key's content over the alias's metadata", captureKey, "plain", "content", ""},
		{"the key's capture patched away: the alias's content", meta, "captured", "content", `{"capture":""}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.patch != "" {
				if r := do(t, "PATCH", url+"/admin/keys/"+metaID, logsAdmin, tt.patch); r.status != 200 {
					t.Fatalf("PATCH /admin/keys/%s: got %d %s", metaID, r.status, r.body)
				}
			}
			r := do(t, "POST", url+"/v1/chat/completions", tt.key, chatBody(tt.alias, false, ""))
			if r.status != 200 {
				t.Fatalf("got %d %s, want 200", r.status, r.body)
			}
			rec := waitRecord(t, url, r.header.Get("X-Request-Id"))
			if rec.Capture != tt.want || (rec.Content != nil) != (tt.want == "content") {
				t.Errorf("got capture %q with content %+v, want %q", rec.Capture, rec.Content, tt.want)
			}
			if tt.want == "content" && (!strings.Contains(rec.Content.Request, "Hello there, gateway.") ||
				rec.Content.Answer != "Hello there, gateway." || rec.Content.Truncated) {
				t.Errorf("got content %+v, want the prompt and its echo, whole", rec.Content)
			}
		})
	}
}

// Captured texts are cut at max_content_bytes (32 KiB by default), on a UTF-8 boundary, and
// the record says so and keeps the cap.
func TestRequestLogCaptureCap(t *testing.T) {
	for _, tt := range []struct {
		name   string
		logs   string
		cap    int
		prompt string
	}{
		// "€" is 3 bytes: neither cap falls between two of them.
		{"default", "", 32 << 10, strings.Repeat("€", 12_000)},
		{"configured", ", max_content_bytes: 64", 64, strings.Repeat("€", 30)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url := serveGate(t, sqliteLogs(t, ", capture: content"+tt.logs)+`
providers:
  sim: {kind: sim}
models:
  default: [sim/echo]
`, nil, time.Minute, nil)
			_, key := createKey(t, url, logsAdmin, `{"name":"k"}`)
			short := do(t, "POST", url+"/v1/chat/completions", key, say("default", "short", false, ""))
			long := do(t, "POST", url+"/v1/chat/completions", key, say("default", tt.prompt, false, ""))
			if short.status != 200 || long.status != 200 {
				t.Fatalf("got %d and %d, want 200", short.status, long.status)
			}
			s := waitRecord(t, url, short.header.Get("X-Request-Id")).Content
			if s == nil || s.Truncated || s.Cap != tt.cap || s.Answer != "short" {
				t.Errorf("short call's content %+v, want it whole, cap %d", s, tt.cap)
			}
			l := waitRecord(t, url, long.header.Get("X-Request-Id")).Content
			if l == nil || !l.Truncated || l.Cap != tt.cap {
				t.Fatalf("long call's content %+v, want it cut, cap %d", l, tt.cap)
			}
			for what, got := range map[string]struct{ text, whole string }{
				"request": {l.Request, "user: " + tt.prompt + "\n"},
				"answer":  {l.Answer, tt.prompt},
			} {
				// Cut on a rune boundary: what is kept is a prefix, valid, and short of the
				// cap by less than one rune.
				if !utf8.ValidString(got.text) || !strings.HasPrefix(got.whole, got.text) ||
					len(got.text) > tt.cap || len(got.text) <= tt.cap-utf8.UTFMax {
					t.Errorf("%s: kept %d bytes (valid %v, a prefix %v), want a valid prefix of at most %d, cut at a rune",
						what, len(got.text), utf8.ValidString(got.text), strings.HasPrefix(got.whole, got.text), tt.cap)
				}
			}
		})
	}
}
