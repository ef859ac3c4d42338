package embeddings

import "testing"

func TestEmbeddingUsage(t *testing.T) {
	tests := []struct {
		name, raw     string
		prompt, total int
		ok            bool
	}{
		{"usage last", `{"object":"list","data":[{"embedding":[0.1,-2e-3]}],"model":"m","usage":{"prompt_tokens":3,"total_tokens":3}}`, 3, 3, true},
		{"usage first", `{"usage": {"prompt_tokens":2,"total_tokens":5},"data":[]}`, 2, 5, true},
		{"none", `{"object":"list","data":[]}`, 0, 0, false},
		{"only inside a string", `{"model":"x\"usage\":{}","data":[]}`, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, ok := Usage([]byte(tt.raw))
			if ok != tt.ok || u.PromptTokens != tt.prompt || u.TotalTokens != tt.total {
				t.Errorf("got %+v %v, want prompt %d total %d %v", u, ok, tt.prompt, tt.total, tt.ok)
			}
		})
	}
}
