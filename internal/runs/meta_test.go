package runs

import (
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

// A run's usage metadata says the prompt cache's reads and writes (issue 46), and leaves
// them out when there were none.
func TestUsageMetaCache(t *testing.T) {
	tests := []struct {
		name string
		u    llm.Usage
		want string
	}{
		{"cache", llm.Usage{PromptTokens: 900, CompletionTokens: 10, TotalTokens: 910, CachedTokens: 600, CacheWriteTokens: 200},
			`{"usage":{"inputTokens":900,"outputTokens":10,"totalTokens":910,"cachedInputTokens":600,"cacheWriteInputTokens":200},`},
		{"none", llm.Usage{PromptTokens: 9, CompletionTokens: 1, TotalTokens: 10},
			`{"usage":{"inputTokens":9,"outputTokens":1,"totalTokens":10},`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(finishMeta(tt.u, "a/x", 1, 1, nil)); !strings.HasPrefix(got, tt.want) {
				t.Errorf("got %s, want it to start %s", got, tt.want)
			}
		})
	}
}
