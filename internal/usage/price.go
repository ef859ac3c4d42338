package usage

import (
	"math"
	"regexp"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Price is what a model costs, in USD per million tokens. CachedInput applies to prompt
// tokens read from the provider's cache, CacheWrite to those written to it (Anthropic
// charges them at 1.25 times the input price); both are part of the prompt tokens.
type Price struct {
	Input, Output, CachedInput, CacheWrite float64
}

// Prices finds the price of a target: the operator's table first, by "provider/model" then
// by model name, then the built-in table by model name. A model name also matches with its
// date suffix left out ("gpt-4o-2024-08-06" is priced as "gpt-4o"). Immutable once built.
type Prices struct {
	over map[string]Price
}

// NewPrices returns the built-in table overridden by over (keys: "provider/model" or a
// model name).
func NewPrices(over map[string]Price) *Prices {
	return &Prices{over: over}
}

// bedrockModel is a Bedrock model id or inference profile ("us.anthropic.claude-sonnet-4-5-
// 20250929-v1:0", "anthropic.claude-3-haiku-20240307-v1:0"; an ARN's last segment): the
// vendor's model name is the submatch.
var bedrockModel = regexp.MustCompile(`^(?:[a-z]{2,6}\.)?anthropic\.(claude-[a-z0-9.-]+?)(?:-v\d+(?::\d+)?)?$`)

// dated is a model's date or version suffix, which does not change its price; Vertex AI
// writes Claude's date after an @ ("claude-sonnet-4-5@20250929").
var dated = regexp.MustCompile(`(-(\d{4}-\d{2}-\d{2}|\d{8}|latest)|@\d{8})$`)

// Lookup returns the price of target ("provider/model") serving the upstream model; false
// when neither table knows it (the call then costs nothing in the account).
func (p *Prices) Lookup(target, model string) (Price, bool) {
	if p != nil {
		if pr, ok := p.over[target]; ok {
			return pr, true
		}
	}
	names := []string{model}
	if i := strings.LastIndexByte(model, '/'); i >= 0 { // OpenRouter's "openai/gpt-4o"
		names = append(names, model[i+1:])
	}
	if m := bedrockModel.FindStringSubmatch(names[len(names)-1]); m != nil {
		// Bedrock's ids and inference profiles name the model Anthropic's way, between a
		// region and vendor prefix and a version suffix.
		names = append(names, m[1])
	}
	for _, n := range names {
		for _, m := range []string{n, dated.ReplaceAllString(n, "")} {
			if p != nil {
				if pr, ok := p.over[m]; ok {
					return pr, true
				}
			}
			if pr, ok := builtin[m]; ok {
				return pr, true
			}
		}
	}
	return Price{}, false
}

// Cost is what u costs at p, in nano-USD, rounded to the nearest. The prompt tokens include
// the cached and cache-write ones (as the gateway reports usage, DESIGN §2).
func Cost(p Price, u llm.Usage) int64 {
	cached, write := float64(u.CachedTokens), float64(u.CacheWriteTokens)
	plain := max(float64(u.PromptTokens)-cached-write, 0)
	// USD per million tokens is nano-USD per thousandth of a token: times 1000 per token.
	usd := plain*p.Input + cached*p.CachedInput + write*p.CacheWrite + float64(u.CompletionTokens)*p.Output
	return int64(math.Round(usd * 1000))
}

// USD converts nano-USD to USD.
func USD(nano int64) float64 { return float64(nano) / 1e9 }

// Nano converts USD to nano-USD, rounded to the nearest.
func Nano(usd float64) int64 { return int64(math.Round(usd * 1e9)) }
