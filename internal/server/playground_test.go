package server_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/auth"
)

// TestPlaygroundPublic: the page is served without a key when auth is on (it holds no
// secret), while the /v1 calls it makes still need one; its files carry the CSP.
func TestPlaygroundPublic(t *testing.T) {
	const secret = "sk-sluice-playground-test"
	g := newGateway(t, baseConfig+"keys: [{name: k, hash: "+auth.Hash(secret)+"}]\nauth: {admin_token: adm}\n")
	tests := []struct {
		name, method, path, key string
		status                  int
		ctype                   string
	}{
		{"the page, no key", "GET", "/", "", 200, "text/html; charset=utf-8"},
		{"the page, HEAD", "HEAD", "/", "", 200, "text/html; charset=utf-8"},
		{"a script, no key", "GET", "/playground/stream.js", "", 200, "text/javascript; charset=utf-8"},
		{"no such file", "GET", "/playground/secret.txt", "", 404, ""},
		{"the API it calls, no key", "GET", "/v1/models", "", 401, ""},
		{"the API it calls, with the key", "GET", "/v1/models", secret, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := uiDo(t, context.Background(), tt.method, g.url+tt.path, tt.key, "")
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("got %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if tt.ctype == "" {
				return
			}
			if got := resp.Header.Get("Content-Type"); got != tt.ctype {
				t.Errorf("Content-Type: got %q, want %q", got, tt.ctype)
			}
			if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-inline") {
				t.Errorf("got CSP %q, want default-src 'self' and no unsafe-inline", csp)
			}
			if tt.method == "GET" && tt.path == "/" && !strings.Contains(string(body), "Sluice playground") {
				t.Errorf("got %.200s, want the page", body)
			}
		})
	}
}
