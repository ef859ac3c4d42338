package config

import (
	"strings"
	"testing"
)

// Prices, budgets and guardrails of issue 9, as a configuration writes them.
func TestUsageAndGuardrails(t *testing.T) {
	src := `
prices:
  gpt-4.1-mini: {input: 0.4, output: 1.6, cached_input: 0.1}
  local/llama3: {input: 0, output: 0}
  anthropic/claude-sonnet-4-5: {input: 3, output: 15, cached_input: 0.3, cache_write: 3.75, cache_write_1h: 6}
guardrails:
  no-pii:  {stage: input, kind: pii, action: mask}
  short:   {stage: input, kind: max_size, max_tokens: 8000}
  json:    {stage: output, kind: json_schema}
  person:  {stage: output, kind: json_schema, schema: {type: object, required: [name]}}
  no-leak: {stage: output, kind: terms, terms: [condor], mode: stream}
keys:
  - name: team-a
    hash: ` + strings.Repeat("b", 64) + `
    budget: {daily_usd: 5, monthly_usd: 100.5}
    guardrails: [no-pii, json]
`
	c := mustParse(t, src, env())
	p := c.Prices["gpt-4.1-mini"]
	if p.Input != 0.4 || p.Output != 1.6 || p.CachedInput == nil || *p.CachedInput != 0.1 || p.CacheWrite != nil {
		t.Errorf("got price %+v, want input 0.4, output 1.6, cached 0.1, no cache write", p)
	}
	if p := c.Prices["anthropic/claude-sonnet-4-5"]; p.CacheWrite == nil || *p.CacheWrite != 3.75 || p.CacheWrite1h == nil || *p.CacheWrite1h != 6 {
		t.Errorf("got price %+v, want cache writes 3.75 (5m) and 6 (1h)", p)
	}
	if p := c.Prices["gpt-4.1-mini"]; p.CacheWrite1h != nil {
		t.Errorf("got 1h write %v, want none (absent)", *p.CacheWrite1h)
	}
	if _, ok := c.Prices["local/llama3"]; !ok {
		t.Errorf("got prices %v, want local/llama3", c.Prices)
	}
	k := c.Keys[0]
	if k.Budget != (Budget{DailyUSD: 5, MonthlyUSD: 100.5}) || len(k.Guardrails) != 2 {
		t.Errorf("got key budget %+v guardrails %v", k.Budget, k.Guardrails)
	}
	g := c.Guardrails["no-pii"]
	if g.Action != "mask" || g.Mode != "hold" {
		t.Errorf("got %+v, want action mask, mode hold (the default)", g)
	}
	if c.Guardrails["short"].MaxTokens != 8000 || c.Guardrails["no-leak"].Mode != "stream" {
		t.Errorf("got %+v %+v", c.Guardrails["short"], c.Guardrails["no-leak"])
	}
	if s := string(c.Guardrails["person"].Schema); !strings.Contains(s, `"required":["name"]`) {
		t.Errorf("got schema %s, want the YAML as JSON", s)
	}
}
