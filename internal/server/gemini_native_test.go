package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// geminiUpstream is a fake Gemini API that answers every call with chunks as alt=sse events;
// sent returns the path and query, and the body, of the last call.
func geminiUpstream(t *testing.T, chunks []string) (url string, sent func() (path, body string)) {
	var mu sync.Mutex
	var gotPath, gotBody string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		gotPath, gotBody = r.URL.Path+"?"+r.URL.RawQuery, string(b)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			io.WriteString(w, "data: "+c+"\r\n\r\n")
		}
	}))
	t.Cleanup(up.Close)
	return up.URL, func() (string, string) {
		mu.Lock()
		defer mu.Unlock()
		return gotPath, gotBody
	}
}

// TestGeminiNative: a Gemini client's body reaches a Gemini target byte for byte (its spacing,
// member order, safetySettings, thoughtSignature and all), the model being the target's in
// the path; a Chat target of the same alias gets the translation. The client gets the
// upstream's stream through the redaction window: a key split across two chunks is masked.
func TestGeminiNative(t *testing.T) {
	const key = "sk-proj-Xq7Rt2Lm9Vb4Nc8Zd1Wf6Gh3Jk5Pa0Se7"
	up, sent := geminiUpstream(t, []string{
		`{"candidates":[{"content":{"parts":[{"text":"the key is ` + key[:10] + `"}],"role":"model"},"index":0}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"` + key[10:] + ` ok"}],"role":"model"},"finishReason":"STOP","index":0}],` +
			`"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":7,"totalTokenCount":12}}`,
	})
	gs := serveConfig(t, `
providers:
  g: {kind: gemini, api_key: k, base_url: "${URL}/v1beta"}
models:
  flash: [g/gemini-2.5-flash]
`, map[string]string{"URL": up})
	t.Cleanup(gs.Close)
	body := `{ "safetySettings": [{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}],
  "contents": [
    {"role":"user","parts":[{"text":"Weather?"}]},
    {"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"CiQBVKhc7sig-paris"}]},
    {"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"t":21}}}]}],
  "tools": [{"functionDeclarations":[{"name":"get_weather","behavior":"BLOCKING","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"}}}}]}],
  "generationConfig": {"temperature": 0.25, "thinkingConfig": {"thinkingBudget": 512}} }`
	resp, got := postGemini(t, &gateway{url: gs.URL}, "/v1beta/models/flash:streamGenerateContent?alt=sse", body)
	if resp.StatusCode != 200 {
		t.Fatalf("got %d %s", resp.StatusCode, got)
	}
	gotPath, gotBody := sent()
	if gotBody != body {
		t.Errorf("the upstream got\n%s\nwant the client's bytes\n%s", gotBody, body)
	}
	if gotPath != "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse" {
		t.Errorf("the upstream got the path %s, want the target's model", gotPath)
	}
	if strings.Contains(got, key[:10]) || !strings.Contains(got, "[REDACTED:openai_key]") || !strings.Contains(got, `"finishReason":"STOP"`) {
		t.Errorf("the client got %q, want the key masked and the stream whole", got)
	}
}

// TestGeminiNativeOnlyToGemini: the same body to a Chat target is translated (the Chat
// upstream never sees Gemini's members).
func TestGeminiNativeOnlyToGemini(t *testing.T) {
	g := geminiGateway(t)
	body := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}]}`
	if resp, got := postGemini(t, g, "/v1beta/models/g-echo:generateContent", body); resp.StatusCode != 200 {
		t.Fatalf("got %d %s", resp.StatusCode, got)
	}
	up := string(g.mock.LastRequest("echo"))
	if !strings.Contains(up, `"messages":[`) || strings.Contains(up, "safetySettings") || strings.Contains(up, "contents") {
		t.Errorf("the Chat upstream got %s, want a translated request", up)
	}
}
