package config

import (
	"slices"
	"testing"
)

// Credentials lists every api_key, header and query value and base_url secret, but the
// values of the headers and parameters known to be public, once each.
func TestCredentials(t *testing.T) {
	c := mustParse(t, `
providers:
  openai: {kind: openai, api_key: "${KEY}"}
  again: {kind: openai, api_key: "${KEY}", api: responses}
  azure: {kind: openai-compatible, base_url: "https://u:pw-secret-1@x.example/v1?code=qs-secret-2",
          headers: {api-key: hdr-secret-3, HTTP-Referer: "https://app.example", X-Title: App},
          query: {api-version: 2025-04-01-preview, sig: qs-secret-4}}
  claude: {kind: anthropic, api_key: sk-ant-secret-5, headers: {anthropic-beta: tools-2024}}
  sim: {kind: sim}
`, env("KEY", "sk-secret-0"))
	want := []string{"hdr-secret-3", "pw-secret-1", "qs-secret-2", "qs-secret-4", "sk-ant-secret-5", "sk-secret-0"}
	if got := c.Credentials(); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
