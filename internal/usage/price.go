package usage

import (
	"math"
	"regexp"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
)

// Price is what a model costs, in USD per million tokens. CachedInput applies to prompt
// tokens read from the provider's cache, CacheWrite to those written to it with the default
// 5-minute lifetime (Anthropic charges them at 1.25 times the input price) and CacheWrite1h
// to those written with the 1-hour one (2 times); all are part of the prompt tokens. A zero
// cache rate means the table does not know it, not that the tokens are free: see rates.
// Unit is the price of one billed unit, in USD: an image generated, a rerank's search unit
// (llm.Usage.Units, issue 48).
type Price struct {
	Input, Output, CachedInput, CacheWrite, CacheWrite1h float64
	Unit                                                 float64
	// Batch is the fraction of every rate a call of the provider's batch API pays (files
	// and batches, issue 48); 0: DefaultBatch.
	Batch float64
}

// DefaultBatch is the fraction of a model's price its batch API charges when the table
// names none: OpenAI's and Anthropic's half price.
const DefaultBatch = 0.5

// Batched is p at its batch price: every rate times p.Batch (DefaultBatch when 0).
func (p Price) Batched() Price {
	f := p.Batch
	if f <= 0 {
		f = DefaultBatch
	}
	return Price{Input: p.Input * f, Output: p.Output * f, CachedInput: p.CachedInput * f, CacheWrite: p.CacheWrite * f,
		CacheWrite1h: p.CacheWrite1h * f, Unit: p.Unit * f, Batch: 1}
}

// rates returns p's cache read, 5-minute and 1-hour write rates with the unknown (zero) ones
// filled in: a read or a 5-minute write at the input price, a 1-hour write at the 5-minute
// write's, so that a model priced without cache rates never counts cached tokens as free.
func (p Price) rates() (read, write5m, write1h float64) {
	read, write5m, write1h = p.CachedInput, p.CacheWrite, p.CacheWrite1h
	if read == 0 {
		read = p.Input
	}
	if write5m == 0 {
		write5m = p.Input
	}
	if write1h == 0 {
		write1h = write5m
	}
	return read, write5m, write1h
}

// cacheSplit returns u's cache reads, 5-minute writes and 1-hour writes, clamped so that a
// provider's inconsistent report (more 1-hour writes than writes) never counts a token twice.
func cacheSplit(u llm.Usage) (read, write5m, write1h float64) {
	w1h := min(max(u.CacheWrite1hTokens, 0), max(u.CacheWriteTokens, 0))
	return float64(max(u.CachedTokens, 0)), float64(max(u.CacheWriteTokens, 0) - w1h), float64(w1h)
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

// dated is a model's date or version suffix, which does not change its price: "-20250929",
// or Vertex's "@20250929" on Claude (claude-sonnet-4-5@20250929 is priced as Anthropic's).
var dated = regexp.MustCompile(`[-@](\d{4}-\d{2}-\d{2}|\d{8}|latest)$`)

// Lookup returns the price of target ("provider/model") serving the upstream model; false
// when neither table knows it (the call then costs nothing in the account).
func (p *Prices) Lookup(target, model string) (Price, bool) {
	if p != nil {
		if pr, ok := p.over[target]; ok {
			return pr, true
		}
	}
	// The names in order: the model, its last segment (OpenRouter's "openai/gpt-4o"), the
	// model of a Bedrock id; each as it is, then without its date. The regular expressions
	// run only when the names before did not match: most lookups cost two map reads.
	if pr, ok := p.named(model); ok {
		return pr, true
	}
	last := model
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		last = model[i+1:]
		if pr, ok := p.named(last); ok {
			return pr, true
		}
	}
	if m := bedrockModel.FindStringSubmatch(last); m != nil {
		// Bedrock's ids and inference profiles name the model Anthropic's way, between a
		// region and vendor prefix and a version suffix.
		return p.named(m[1])
	}
	return Price{}, false
}

// named is the price of the model name n, or of n without its date suffix.
func (p *Prices) named(n string) (Price, bool) {
	if pr, ok := p.find(n); ok {
		return pr, true
	}
	if !dated.MatchString(n) { // no allocation, unlike a replacement
		return Price{}, false
	}
	return p.find(n[:dated.FindStringIndex(n)[0]])
}

// find is the price of the name m: p's own, else the built-in table's.
func (p *Prices) find(m string) (Price, bool) {
	if p != nil {
		if pr, ok := p.over[m]; ok {
			return pr, true
		}
	}
	pr, ok := builtin[m]
	return pr, ok
}

// Cost is what u costs at p, in nano-USD, rounded to the nearest: the plain prompt tokens at
// the input price, cache reads, 5-minute and 1-hour cache writes at their rates, the
// completion at the output price. The prompt tokens include the cached and cache-write ones
// (as the gateway reports usage, DESIGN §2).
func Cost(p Price, u llm.Usage) int64 {
	cached, w5m, w1h := cacheSplit(u)
	read, r5m, r1h := p.rates()
	plain := max(float64(u.PromptTokens)-cached-w5m-w1h, 0)
	// USD per million tokens is nano-USD per thousandth of a token: times 1000 per token.
	usd := plain*p.Input + cached*read + w5m*r5m + w1h*r1h + float64(u.CompletionTokens)*p.Output
	return int64(math.Round(usd*1000 + float64(max(u.Units, 0))*p.Unit*1e9))
}

// Saved is what the provider's prompt cache saved on u at p, in nano-USD, rounded to the
// nearest: the cache reads' discount against the input price, minus what the cache writes
// cost over it. It is negative when a call wrote a cache it did not (yet) read: the price of
// a cold cache, which the account and the request log show so that an operator can see
// whether caching pays off.
func Saved(p Price, u llm.Usage) int64 {
	cached, w5m, w1h := cacheSplit(u)
	read, r5m, r1h := p.rates()
	usd := cached*(p.Input-read) - w5m*(r5m-p.Input) - w1h*(r1h-p.Input)
	return int64(math.Round(usd * 1000))
}

// USD converts nano-USD to USD.
func USD(nano int64) float64 { return float64(nano) / 1e9 }

// Nano converts USD to nano-USD, rounded to the nearest.
func Nano(usd float64) int64 { return int64(math.Round(usd * 1e9)) }
