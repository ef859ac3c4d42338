package usage

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// settles records what Settle was asked; its holds are MemoryBudgets'.
type settles struct {
	MemoryBudgets
	got []int64
}

func (s *settles) Reserve(context.Context, Reservation) (Verdict, error) {
	return Verdict{OK: true}, nil
}
func (s *settles) Settle(_ context.Context, _ Reservation, cost int64) error {
	s.got = append(s.got, cost)
	return nil
}

func TestMeter(t *testing.T) {
	m := &Meter{Prices: NewPrices(map[string]Price{"a/x": {Input: 1, Output: 2}}), Start: time.Now(), Prompt: 40}
	// A failed attempt with no usage report is charged an estimate: the prompt and what was
	// relayed.
	m.Round("a/x", "x", &llm.Response{Choices: []llm.Choice{{Text: "one two three four"}}}, errors.New("cut"))
	if !m.Usage.Estimated || m.Usage.PromptTokens != 40 || m.Usage.CompletionTokens == 0 || !m.Charged {
		t.Fatalf("after a failed attempt: %+v, want an estimate with the prompt's 40 tokens", m.Usage)
	}
	first := m.Usage
	// The round that served reports its own.
	m.Round("b/y", "y", &llm.Response{Usage: llm.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}}, nil)
	m.Round("b/y", "y", nil, errors.New("nothing relayed")) // charges nothing
	if m.Usage.PromptTokens != 50 || m.Target != "b/y" {
		t.Errorf("got %+v on %s, want 50 prompt tokens, last charged b/y", m.Usage, m.Target)
	}
	// b/y has no price: the cost is a/x's attempt alone.
	if want := Cost(Price{Input: 1, Output: 2}, first); m.Cost != want || want == 0 {
		t.Errorf("got cost %d nano-USD, want %d", m.Cost, want)
	}
	// Settle: the first reservation takes the whole cost, the others nothing.
	b := &settles{}
	m.Held = []Reservation{{}, {}, {}}
	m.Settle(context.Background(), b)
	if len(b.got) != 3 || b.got[0] != m.Cost || b.got[1] != 0 || b.got[2] != 0 {
		t.Errorf("settled %v, want [%d 0 0]", b.got, m.Cost)
	}
	n := m.Counts(true, 2)
	if n.Requests != 1 || n.Errors != 1 || n.Fallbacks != 1 || n.Estimated != 1 || n.InputTokens != 50 || n.CostNano != m.Cost {
		t.Errorf("got counts %+v", n)
	}
	if n := m.Counts(false, 1); n.Errors != 0 || n.Fallbacks != 0 {
		t.Errorf("a served request on one target: got %+v", n)
	}
}

// TestMeterCache: the prompt cache's reads, 5-minute and 1-hour writes reach the account
// apart, priced at their rates, with what the cache saved (issue 46).
func TestMeterCache(t *testing.T) {
	p := Price{Input: 3, Output: 15, CachedInput: 0.30, CacheWrite: 3.75, CacheWrite1h: 6}
	m := &Meter{Prices: NewPrices(map[string]Price{"a/x": p}), Start: time.Now()}
	turns := []llm.Usage{
		{PromptTokens: 5_000, CacheWriteTokens: 4_000, CacheWrite1hTokens: 1_000, CompletionTokens: 100},
		{PromptTokens: 5_200, CachedTokens: 4_000, CacheWriteTokens: 1_000, CompletionTokens: 80},
	}
	var cost, saved int64
	for _, u := range turns {
		m.Round("a/x", "x", &llm.Response{Usage: u}, nil)
		cost += Cost(p, u)
		saved += Saved(p, u)
	}
	n := m.Counts(false, 1)
	want := Counts{Requests: 1, InputTokens: 10_200, OutputTokens: 180, CachedTokens: 4_000, CacheWriteTokens: 5_000,
		CacheWrite1hTokens: 1_000, CostNano: cost, SavedNano: saved}
	if n != want {
		t.Errorf("got counts %+v, want %+v", n, want)
	}
	// By hand, in nano-USD a token: the first turn's writes cost 3000×750 + 1000×3000 over input, the
	// second's read saves 4000×2700 and its write costs 1000×750.
	if hand := int64(-3_000*750 - 1_000*3_000 + 4_000*2_700 - 1_000*750); saved != hand || m.Saved != hand {
		t.Errorf("got saved %d (meter %d) nano-USD, want %d", saved, m.Saved, hand)
	}
	var sum Counts
	sum.Add(n)
	sum.Add(n)
	if sum.CacheWriteTokens != 10_000 || sum.CacheWrite1hTokens != 2_000 || sum.SavedNano != 2*saved {
		t.Errorf("Add: got %+v, want the cache counters doubled", sum)
	}
}

// A batch's result is charged at half the price unless the table says otherwise (issue 48).
func TestChargeBatch(t *testing.T) {
	prices := NewPrices(map[string]Price{"p/full": {Input: 2, Output: 8}, "p/third": {Input: 3, Output: 9, Batch: 1.0 / 3}})
	u := llm.Usage{PromptTokens: 1000, CompletionTokens: 1000}
	for _, tt := range []struct {
		target string
		want   int64
	}{{"p/full", 5_000_000}, {"p/third", 4_000_000}} { // nano-USD
		m := &Meter{Prices: prices}
		m.ChargeBatch(tt.target, "x", u)
		if m.Cost != tt.want {
			t.Errorf("%s: cost %d, want %d", tt.target, m.Cost, tt.want)
		}
	}
}
