package runs

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// The message metadata a run sends (the client merges each object into the message's, DESIGN
// §8): the run id and model at the start; after each round its usage, the running total,
// the target, the attempts (targets tried, as X-Sluice-Attempts and the access log count
// them: Run.Served) and the calls (every upstream call of the run, later rounds included);
// the total again on finish.

type usageJSON struct {
	InputTokens       int `json:"inputTokens"`
	OutputTokens      int `json:"outputTokens"`
	TotalTokens       int `json:"totalTokens"`
	ReasoningTokens   int `json:"reasoningTokens,omitempty"`
	CachedInputTokens int `json:"cachedInputTokens,omitempty"`
	// CacheWriteInputTokens are the prompt tokens written to the provider's cache (issue 46),
	// part of inputTokens as cachedInputTokens are.
	CacheWriteInputTokens int  `json:"cacheWriteInputTokens,omitempty"`
	Estimated             bool `json:"estimated,omitempty"`
}

func usageOf(u llm.Usage) usageJSON {
	return usageJSON{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens,
		ReasoningTokens: u.ReasoningTokens, CachedInputTokens: u.CachedTokens, CacheWriteInputTokens: u.CacheWriteTokens,
		Estimated: u.Estimated}
}

// mustJSON encodes v as the rest of the gateway writes JSON: no HTML escaping.
func mustJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only the types of this file are encoded
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func startMeta(run, model string) []byte {
	return mustJSON(struct {
		RunID string `json:"runId"`
		Model string `json:"model"`
	}{run, model})
}

func roundMeta(round int, resp *llm.Response, total llm.Usage, target string, attempts, calls int, cost *float64) []byte {
	return mustJSON(struct {
		Round      int       `json:"round"`
		RoundUsage usageJSON `json:"roundUsage"`
		Usage      usageJSON `json:"usage"`
		Target     string    `json:"target"`
		Attempts   int       `json:"attempts"`
		Calls      int       `json:"calls"`
		TTFTMs     int64     `json:"ttftMs"`
		CostUSD    *float64  `json:"costUsd,omitempty"`
	}{round, usageOf(resp.Usage), usageOf(total), target, attempts, calls, resp.FirstText.Milliseconds(), cost})
}

func finishMeta(total llm.Usage, target string, attempts, calls int, cost *float64) []byte {
	return mustJSON(struct {
		Usage    usageJSON `json:"usage"`
		Target   string    `json:"target"`
		Attempts int       `json:"attempts"`
		Calls    int       `json:"calls"`
		CostUSD  *float64  `json:"costUsd,omitempty"`
	}{usageOf(total), target, attempts, calls, cost})
}

// runCost is the cost of a run's rounds so far, in nano-USD; priced stays false until a
// round's target has a price, and costUsd is then left out (0 would say the answer was free).
type runCost struct {
	nano   int64
	priced bool
}

func (c *runCost) add(prices Pricer, target, model string, u llm.Usage) {
	if prices == nil {
		return
	}
	if p, ok := prices.Lookup(target, model); ok {
		c.nano, c.priced = c.nano+usage.Cost(p, u), true
	}
}

// usd is the cost in USD for the metadata, nil when no round was priced.
func (c runCost) usd() *float64 {
	if !c.priced {
		return nil
	}
	v := float64(c.nano) / 1e9
	return &v
}

func restartData(run, failed string) []byte {
	return mustJSON(struct {
		RunID  string `json:"runId"`
		Failed string `json:"failed"`
	}{run, failed})
}

func warningData(maxRounds int) []byte {
	return mustJSON(struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{"max_rounds", "The run stopped after " + strconv.Itoa(maxRounds) + " rounds (runs.max_rounds)."})
}
