package usage

import (
	"strings"
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

// TestCostByHand prices one call per provider from the built-in table and checks it against
// the figure worked out by hand from the providers' published rates, written here as literals
// (USD per million tokens is nano-USD per thousandth of a token: rate × 1000 per token).
func TestCostByHand(t *testing.T) {
	// Anthropic claude-sonnet-4-5: input 3, output 15, cache read 0.30, 5m write 3.75, 1h write 6.
	sonnet := llm.Usage{PromptTokens: 10_000, CachedTokens: 6_000, CacheWriteTokens: 3_000, CacheWrite1hTokens: 1_000, CompletionTokens: 500}
	sonnetCost := int64(1_000*3_000 + 6_000*300 + 2_000*3_750 + 1_000*6_000 + 500*15_000)
	sonnetSaved := int64(6_000*(3_000-300) - 2_000*(3_750-3_000) - 1_000*(6_000-3_000))
	tests := []struct {
		name          string
		target, model string
		u             llm.Usage
		cost, saved   int64 // nano-USD
	}{
		{"anthropic", "anthropic/claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20250929", sonnet, sonnetCost, sonnetSaved},
		{"bedrock claude: anthropic's rates", "aws/us.anthropic.claude-sonnet-4-5-20250929-v1:0", "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
			sonnet, sonnetCost, sonnetSaved},
		{"vertex claude: anthropic's rates", "vertex/claude-sonnet-4-5@20250929", "claude-sonnet-4-5@20250929", sonnet, sonnetCost, sonnetSaved},
		// OpenAI gpt-4.1: input 2, cached input 0.50, output 8; writing the cache is free.
		{"openai", "openai/gpt-4.1-2025-04-14", "gpt-4.1-2025-04-14",
			llm.Usage{PromptTokens: 10_000, CachedTokens: 8_000, CompletionTokens: 200},
			2_000*2_000 + 8_000*500 + 200*8_000, 8_000 * (2_000 - 500)},
		// Gemini gemini-2.5-pro (prompts up to 200k tokens): input 1.25, cached 0.125, output 10.
		{"gemini", "gemini/gemini-2.5-pro", "gemini-2.5-pro",
			llm.Usage{PromptTokens: 20_000, CachedTokens: 16_000, CompletionTokens: 1_000},
			4_000*1_250 + 16_000*125 + 1_000*10_000, 16_000 * (1_250 - 125)},
		// text-embedding-3-small: input 0.02, no cache rate: cached tokens at the input price.
		{"no cache rate: input price", "openai/text-embedding-3-small", "text-embedding-3-small",
			llm.Usage{PromptTokens: 1_000, CachedTokens: 600, CacheWriteTokens: 100}, 1_000 * 20, 0},
	}
	prices := NewPrices(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := prices.Lookup(tt.target, tt.model)
			if !ok {
				t.Fatalf("Lookup(%q, %q): not found", tt.target, tt.model)
			}
			if got := Cost(p, tt.u); got != tt.cost {
				t.Errorf("Cost: got %d nano-USD, want %d", got, tt.cost)
			}
			if got := Saved(p, tt.u); got != tt.saved {
				t.Errorf("Saved: got %d nano-USD, want %d", got, tt.saved)
			}
		})
	}
}

// TestCacheRates checks every entry of the built-in table: cache reads no dearer than input,
// writes no cheaper; Anthropic's 1-hour writes at 2 times the input price and its 5-minute
// ones at 1.25 (Claude 3 Haiku's published $0.30 for $0.25 is 1.2).
func TestCacheRates(t *testing.T) {
	for name, p := range builtin {
		read, w5m, w1h := p.rates()
		if read > p.Input || w5m < p.Input || w1h < w5m {
			t.Errorf("%s: read %v, 5m write %v, 1h write %v against input %v", name, read, w5m, w1h, p.Input)
		}
		if strings.HasPrefix(name, "claude-") && (p.CacheWrite1h != 2*p.Input || p.CacheWrite < 1.2*p.Input || p.CacheWrite > 1.25*p.Input) {
			t.Errorf("%s: writes %v (5m) and %v (1h), want 1.25 and 2 times the input %v", name, p.CacheWrite, p.CacheWrite1h, p.Input)
		}
	}
}

// Units are priced at the unit price (issue 48): dall-e-3 at $0.04 an image, Cohere's rerank
// at $0.002 a search unit, Bedrock's and Vertex AI's per query; tokens and units add up (an
// over-ridden price with both).
func TestCostUnits(t *testing.T) {
	p := NewPrices(map[string]Price{"imgs/both": {Input: 5, Output: 40, Unit: 0.01}})
	tests := []struct {
		target, model string
		u             llm.Usage
		cost          int64
	}{
		{"openai/dall-e-3", "dall-e-3", llm.Usage{Units: 2}, 80_000_000},
		{"cohere/rerank-v3.5", "rerank-v3.5", llm.Usage{Units: 3}, 6_000_000},
		// The clouds' rerankers, per query of 100 documents: by id, ARN, and "@latest".
		{"br/cohere.rerank-v3-5:0", "cohere.rerank-v3-5:0", llm.Usage{Units: 2}, 4_000_000},
		{"br/arn", "arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0", llm.Usage{Units: 1}, 1_000_000},
		{"vx/semantic-ranker-default@latest", "semantic-ranker-default@latest", llm.Usage{Units: 3}, 3_000_000},
		{"vx/semantic-ranker-fast-004", "semantic-ranker-fast-004", llm.Usage{Units: 1}, 1_000_000},
		// The clouds' image models, per image (issue 48).
		{"br/amazon.nova-canvas-v1:0", "amazon.nova-canvas-v1:0", llm.Usage{Units: 2}, 80_000_000},
		{"br/amazon.titan-image-generator-v2:0", "amazon.titan-image-generator-v2:0", llm.Usage{Units: 1}, 10_000_000},
		{"vx/imagen-3.0-generate-002", "imagen-3.0-generate-002", llm.Usage{Units: 3}, 120_000_000},
		{"openai/omni-moderation-latest", "omni-moderation-latest", llm.Usage{Units: 1}, 0},
		{"imgs/both", "x", llm.Usage{PromptTokens: 1000, CompletionTokens: 100, Units: 1}, 1000*5_000 + 100*40_000 + 10_000_000},
	}
	for _, tt := range tests {
		pr, _ := p.Lookup(tt.target, tt.model)
		if got := Cost(pr, tt.u); got != tt.cost {
			t.Errorf("%s: cost %d, want %d", tt.target, got, tt.cost)
		}
	}
}
