package config

import "testing"

// Every key a kind claims is a key of a provider, and no two kinds claim the same one.
func TestKindFields(t *testing.T) {
	owner := map[string]string{}
	for _, k := range kinds {
		for _, key := range k.Fields {
			if _, ok := providerFields[key]; !ok {
				t.Errorf("kind %s: field %q is not a key of a provider", k.Name, key)
			}
			if o, ok := owner[key]; ok {
				t.Errorf("field %q: claimed by kinds %s and %s", key, o, k.Name)
			}
			owner[key] = k.Name
		}
	}
}

// The kinds' defaults reach the providers that leave them out.
func TestKindDefaults(t *testing.T) {
	c := mustParse(t, `
providers:
  o: {kind: openai, api_key: k}
  a: {kind: anthropic, api_key: k}
  g: {kind: gemini, api_key: k}
  l: {kind: openai-compatible, base_url: "http://127.0.0.1:1/v1"}
  s: {kind: sim}
`, env())
	tests := []struct{ name, baseURL, api string }{
		{"o", "https://api.openai.com/v1", "chat"},
		{"a", "https://api.anthropic.com", ""},
		{"g", "https://generativelanguage.googleapis.com/v1beta", ""},
		{"l", "http://127.0.0.1:1/v1", "chat"},
		{"s", "", ""},
	}
	for _, tt := range tests {
		if p := c.Providers[tt.name]; p.BaseURL != tt.baseURL || p.API != tt.api {
			t.Errorf("%s: got base_url %q, api %q; want %q, %q", tt.name, p.BaseURL, p.API, tt.baseURL, tt.api)
		}
	}
	if got, want := kindList(), "openai, openai-compatible, anthropic, bedrock, gemini, vertex, azure, sim, cohere, jina or voyage"; got != want {
		t.Errorf("got kind list %q, want %q", got, want)
	}
}
