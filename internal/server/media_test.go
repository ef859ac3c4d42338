package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestMediaAcrossWires: a PDF and a recording sent as Chat parts reach an Anthropic and a
// Gemini target in those wires' own shapes (a document block, inlineData); a target that
// cannot take the part is passed over without a strike, and the next one serves.
func TestMediaAcrossWires(t *testing.T) {
	const pdf = `{"type":"file","file":{"filename":"report.pdf","file_data":"data:application/pdf;base64,JVBERi0xLjQ="}}`
	const wav = `{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}`
	for _, c := range []struct {
		name, a, b, part, served, want string
	}{
		{"pdf to anthropic", "anth/echo", "mock/echo", pdf, "anth/echo",
			`{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjQ="},"title":"report.pdf"}`},
		{"audio to gemini", "goog/echo", "mock/echo", wav, "goog/echo",
			`{"inlineData":{"mimeType":"audio/wav","data":"UklGRg=="}}`},
		{"audio past anthropic to gemini", "anth/echo", "goog/echo", wav, "goog/echo",
			`{"inlineData":{"mimeType":"audio/wav","data":"UklGRg=="}}`},
		{"pdf to chat", "mock/echo", "anth/echo", pdf, "mock/echo",
			`{"type":"file","file":{"filename":"report.pdf","file_data":"data:application/pdf;base64,JVBERi0xLjQ="}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newFallbackGatewayWith(t, c.a, c.b, "{first_event: 5s}")
			resp := postTo(t, g.url, "/v1/chat/completions",
				`{"model":"pair","messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},`+c.part+`]}]}`)
			out, _ := io.ReadAll(resp.Body)
			up := string(g.mock.LastRequest("echo"))
			if resp.StatusCode != 200 || resp.Header.Get("X-Sluice-Target") != c.served || !strings.Contains(up, c.want) {
				t.Errorf("got %d from %q: %s; the upstream got %s, want %s from %s", resp.StatusCode,
					resp.Header.Get("X-Sluice-Target"), out, up, c.want, c.served)
			}
		})
	}
}

// TestMediaRefused: when no target of the alias can take a part, the client gets a 400 in
// its own wire's error shape naming the part, before any upstream call; never a 5xx.
func TestMediaRefused(t *testing.T) {
	for _, c := range []struct {
		name, path, body, want string
	}{
		{"chat audio", "/v1/chat/completions",
			`{"model":"pair","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}]}]}`,
			"input_audio part of type audio/wav"},
		{"gemini audio", "/v1beta/models/pair:generateContent",
			`{"contents":[{"role":"user","parts":[{"inlineData":{"mimeType":"audio/ogg","data":"T2dnUw=="}}]}]}`,
			"input_audio part of type audio/ogg"},
		{"responses file of openai", "/v1/responses",
			`{"model":"pair","input":[{"role":"user","content":[{"type":"input_file","file_id":"file-1"}]}]}`,
			"stored by openai"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newFallbackGatewayWith(t, "anth/echo", "anth/other", "{first_event: 5s}")
			resp := postTo(t, g.url, c.path, c.body)
			out, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(out), c.want) {
				t.Fatalf("got %d %s, want a 400 saying %q", resp.StatusCode, out, c.want)
			}
			if n := g.mock.Calls("echo") + g.mock.Calls("other"); n != 0 {
				t.Errorf("got %d upstream calls, want none", n)
			}
			var e struct {
				Error struct {
					Message string
					Status  string // Google's shape
					Code    any
				}
			}
			if json.Unmarshal(out, &e) != nil || e.Error.Message == "" {
				t.Errorf("got %s, want the wire's error object", out)
			}
			if strings.HasPrefix(c.path, "/v1beta/") && e.Error.Status != "INVALID_ARGUMENT" {
				t.Errorf("got %s, want Google's INVALID_ARGUMENT", out)
			}
		})
	}
}
