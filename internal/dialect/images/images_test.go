package images

import "testing"

func TestUsage(t *testing.T) {
	tests := []struct {
		name, raw      string
		units, in, out int
		ok             bool
	}{
		{"two urls", `{"created":1,"data":[{"url":"u"},{"url":"v"}]}`, 2, 0, 0, true},
		{"gpt-image-1 tokens", `{"data":[{"b64_json":"iVBO"}],"usage":{"input_tokens":50,"output_tokens":4160,"total_tokens":4210}}`, 1, 50, 4160, true},
		{"not JSON", `{"data":`, 0, 0, 0, false},
	}
	for _, tt := range tests {
		u, ok := Usage([]byte(tt.raw))
		if ok != tt.ok || u.Units != tt.units || u.PromptTokens != tt.in || u.CompletionTokens != tt.out {
			t.Errorf("%s: got %+v %v", tt.name, u, ok)
		}
	}
}

func TestDecodeDefaultModel(t *testing.T) {
	model, req, err := Decode([]byte(`{"prompt":"a lighthouse","n":2}`))
	if err != nil || model != DefaultModel || len(req.Extra) != 2 || req.Extra[0].Name != "prompt" || string(req.Extra[1].Value) != "2" {
		t.Fatalf("got %q %+v %v", model, req, err)
	}
}
