package usage

import (
	"testing"

	"github.com/sluice-gw/sluice/internal/llm"
)

func TestSaved(t *testing.T) {
	sonnet := Price{Input: 3, Output: 15, CachedInput: 0.30, CacheWrite: 3.75, CacheWrite1h: 6}
	tests := []struct {
		name string
		p    Price
		u    llm.Usage
		want int64 // nano-USD
	}{
		{"no cache", sonnet, llm.Usage{PromptTokens: 100, CompletionTokens: 5}, 0},
		{"reads save the discount", sonnet, llm.Usage{PromptTokens: 1000, CachedTokens: 800}, 800 * (3000 - 300)},
		{"a 5m write costs its premium", sonnet, llm.Usage{PromptTokens: 1000, CacheWriteTokens: 400}, -400 * (3750 - 3000)},
		{"a 1h write costs its premium", sonnet, llm.Usage{PromptTokens: 1000, CacheWriteTokens: 400, CacheWrite1hTokens: 100},
			-300*(3750-3000) - 100*(6000-3000)},
		{"reads and writes", sonnet, llm.Usage{PromptTokens: 2000, CachedTokens: 1500, CacheWriteTokens: 200, CacheWrite1hTokens: 200},
			1500*(3000-300) - 200*(6000-3000)},
		{"openai: no write charge", Price{Input: 2, Output: 8, CachedInput: 0.5, CacheWrite: 2}, llm.Usage{PromptTokens: 1000, CachedTokens: 600, CacheWriteTokens: 50},
			600 * (2000 - 500)},
		{"no cache rate: nothing saved, nothing free", Price{Input: 1, Output: 2}, llm.Usage{PromptTokens: 900, CachedTokens: 500, CacheWriteTokens: 300, CacheWrite1hTokens: 100}, 0},
		{"more 1h writes than writes clamps", sonnet, llm.Usage{PromptTokens: 100, CacheWriteTokens: 10, CacheWrite1hTokens: 50}, -10 * (6000 - 3000)},
	}
	for _, tt := range tests {
		if got := Saved(tt.p, tt.u); got != tt.want {
			t.Errorf("%s: got %d nano-USD, want %d", tt.name, got, tt.want)
		}
	}
}
