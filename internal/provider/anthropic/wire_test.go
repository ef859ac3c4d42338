package anthropic

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/provider/providertest"
)

// TestRequestOnTheWire checks what the upstream receives: the URL, the headers, the body.
func TestRequestOnTheWire(t *testing.T) {
	tests := []struct {
		name    string
		base    string // appended to the server's URL
		version string
		want    string // anthropic-version
	}{
		{"defaults", "", "", "2023-06-01"},
		{"trailing slash and /v1 given by mistake", "/v1/", "2024-01-01", "2024-01-01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUpstream(t, providertest.SSE(msgStart+msgStop))
			c := New(Config{BaseURL: u.URL + tt.base, APIKey: testKey, Version: tt.version, HTTPClient: u.Client(),
				Headers: map[string]string{"anthropic-beta": "fine-grained-tool-streaming-2025-05-14", "X-Team": "blue"}})
			_, end := providertest.Drain(t, openStream(t, c))
			wantEOF(t, end)
			body, h, url := u.Last()
			if url != "/v1/messages" {
				t.Errorf("url: got %s, want /v1/messages", url)
			}
			for k, v := range map[string]string{"X-Api-Key": testKey, "Anthropic-Version": tt.want, "Content-Type": "application/json",
				"Accept": "text/event-stream", "Anthropic-Beta": "fine-grained-tool-streaming-2025-05-14", "X-Team": "blue", "Authorization": ""} {
				if got := h.Get(k); got != v {
					t.Errorf("header %s: got %q, want %q", k, got, v)
				}
			}
			want, _, _ := encodeRequest(testRequest(), 8192)
			if string(body) != string(want) {
				t.Errorf("body: got\n%s\nwant\n%s", body, want)
			}
		})
	}
}

func TestDefaultMaxTokensConfig(t *testing.T) {
	u := newUpstream(t, providertest.SSE(msgStart+msgStop))
	c := u.client(Config{DefaultMaxTokens: func(model string) int {
		if model == "claude-sonnet-4-5" {
			return 32000
		}
		return 0
	}})
	for model, want := range map[string]string{"claude-sonnet-4-5": `"max_tokens":32000`, "claude-3-5-haiku": `"max_tokens":4096`} {
		r := testRequest()
		r.Model = model
		s, err := c.Stream(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		providertest.Drain(t, s)
		s.Close()
		b, _, _ := u.Last()
		body := string(b)
		if !strings.Contains(body, want) {
			t.Errorf("%s: body %s, want %s", model, body, want)
		}
	}
}
