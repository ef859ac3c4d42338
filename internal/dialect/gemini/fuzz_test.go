package gemini

import (
	"encoding/json"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// FuzzDecode: any body and path decode to a request or to a 4xx in Google's shape; never a
// panic or a 5xx.
func FuzzDecode(f *testing.F) {
	f.Add("m:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	f.Add("m:streamGenerateContent", `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":{}}}]},`+
		`{"parts":[{"functionResponse":{"name":"f","response":{}}}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT"}}]}]}`)
	f.Add("m:countTokens", `{"generateContentRequest":{"contents":[{"parts":[{"inlineData":{"mimeType":"image/png","data":"AA=="}}]}]}}`)
	f.Add("m:generateContent", `{"contents":[{"parts":[{"text":"a"}]}],"generationConfig":{"responseMimeType":"application/json","responseSchema":{"type":"OBJECT"},"thinkingConfig":{"thinkingBudget":-1}}}`)
	f.Add("m:generateContent", `{"contents":[{"parts":[{"inlineData":{"mimeType":"application/pdf","data":"JVBERi0="}},{"inlineData":{"mimeType":"audio/wav","data":"UklGRg=="}},{"fileData":{"mimeType":"application/pdf","fileUri":"https://generativelanguage.googleapis.com/v1beta/files/f"}}]}]}`)
	// A context cache and thought signatures (issue 46).
	f.Add("m:generateContent", `{"contents":[{"role":"model","parts":[{"text":"t","thought":true,"thoughtSignature":"Cq4B+/=="},`+
		`{"functionCall":{"id":"c1","name":"f","args":{}},"thoughtSignature":"CiQB"}]}],"cachedContent":"cachedContents/abc"}`)
	f.Add("m:generateContent", `{"contents":[{"parts":[{"text":"a"}]}],"cachedContent":""}`)
	f.Add("x", `[]`)
	f.Fuzz(func(t *testing.T, path, body string) {
		d, err := Decode([]byte(body), input(path, "sse"))
		if err != nil {
			status, b := Error(err)
			if status < 400 || status >= 500 || !json.Valid(b) {
				t.Fatalf("%q %q: got %d %s, want a Google 4xx", path, body, status, b)
			}
			return
		}
		if d.Req == nil || d.Model == "" {
			t.Fatalf("%q %q: decoded %+v without a request or model", path, body, d)
		}
		for _, m := range d.Req.Messages {
			if m.Role == llm.RoleTool && m.ToolCallID == "" {
				t.Fatalf("a tool message without its call: %+v", m)
			}
			for _, r := range m.Reasoning {
				if r.Wire != "gemini" {
					t.Fatalf("reasoning of wire %q: only a Gemini target reads it", r.Wire)
				}
			}
		}
		if n := d.Req.Native; n != nil && (len(n.Only) > 1 || len(n.Only) == 1 && n.Only[0] != "cachedContent") {
			t.Fatalf("%q: native %+v: other targets may refuse a cachedContent only", body, n)
		}
	})
}
