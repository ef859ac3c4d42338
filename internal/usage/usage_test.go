package usage

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

func TestLookup(t *testing.T) {
	p := NewPrices(map[string]Price{
		"gpt-4.1-mini":   {Input: 1, Output: 2},
		"local/llama3":   {Input: 0.5},
		"my-fine-tune-x": {Output: 9},
	})
	tests := []struct {
		target, model string
		want          Price
		ok            bool
	}{
		{"openai/gpt-4.1-mini", "gpt-4.1-mini", Price{Input: 1, Output: 2}, true}, // overridden
		{"openai/gpt-4.1-mini-2025-04-14", "gpt-4.1-mini-2025-04-14", Price{Input: 1, Output: 2}, true},
		{"openai/gpt-4o-2024-08-06", "gpt-4o-2024-08-06", builtin["gpt-4o"], true}, // date suffix
		{"anthropic/claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20250929", builtin["claude-sonnet-4-5"], true},
		{"vertex/claude-sonnet-4-5@20250929", "claude-sonnet-4-5@20250929", builtin["claude-sonnet-4-5"], true}, // Vertex AI's Claude ids
		{"vertex/claude-3-5-haiku@20241022", "claude-3-5-haiku@20241022", builtin["claude-3-5-haiku"], true},
		{"anthropic/claude-3-5-haiku-latest", "claude-3-5-haiku-latest", builtin["claude-3-5-haiku"], true},
		{"openrouter/openai/gpt-4o-mini", "openai/gpt-4o-mini", builtin["gpt-4o-mini"], true}, // last segment
		{"local/llama3", "llama3", Price{Input: 0.5}, true},                                   // by target
		{"other/llama3", "llama3", Price{}, false},
		{"x/my-fine-tune-x", "my-fine-tune-x", Price{Output: 9}, true},
		// Bedrock: inference profiles and model ids, an ARN's last segment.
		{"aws/us.anthropic.claude-sonnet-4-5-20250929-v1:0", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", builtin["claude-sonnet-4-5"], true},
		{"aws/anthropic.claude-3-haiku-20240307-v1:0", "anthropic.claude-3-haiku-20240307-v1:0", builtin["claude-3-haiku"], true},
		{"aws/arn", "arn:aws:bedrock:us-east-1:1:inference-profile/global.anthropic.claude-haiku-4-5-20251001-v1:0", builtin["claude-haiku-4-5"], true},
		{"aws/amazon.nova-pro-v1:0", "amazon.nova-pro-v1:0", Price{}, false},
	}
	for _, tt := range tests {
		got, ok := p.Lookup(tt.target, tt.model)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Lookup(%q, %q): got %+v %v, want %+v %v", tt.target, tt.model, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCost(t *testing.T) {
	tests := []struct {
		name string
		p    Price
		u    llm.Usage
		want int64 // nano-USD
	}{
		{"plain", Price{Input: 2, Output: 8}, llm.Usage{PromptTokens: 14, CompletionTokens: 30}, 14*2000 + 30*8000},
		{"cached", Price{Input: 2, Output: 8, CachedInput: 0.5}, llm.Usage{PromptTokens: 1000, CachedTokens: 800, CompletionTokens: 10},
			200*2000 + 800*500 + 10*8000},
		{"anthropic cache write", builtin["claude-sonnet-4-5"], llm.Usage{PromptTokens: 1100, CachedTokens: 600, CacheWriteTokens: 400, CompletionTokens: 50},
			100*3000 + 600*300 + 400*3750 + 50*15000},
		{"fraction of a nano rounds", Price{Input: 0.0001}, llm.Usage{PromptTokens: 3}, 0},
		{"gpt-4.1-nano", builtin["gpt-4.1-nano"], llm.Usage{PromptTokens: 1_000_000, CompletionTokens: 1_000_000}, 500_000_000},
		{"more cached than prompt", Price{Input: 1, CachedInput: 1}, llm.Usage{PromptTokens: 5, CachedTokens: 9}, 9000},
	}
	for _, tt := range tests {
		if got := Cost(tt.p, tt.u); got != tt.want {
			t.Errorf("%s: got %d nano-USD, want %d", tt.name, got, tt.want)
		}
	}
	if USD(1_500_000_000) != 1.5 || Nano(0.25) != 250_000_000 {
		t.Errorf("USD/Nano do not convert at 1e9")
	}
}

func TestOf(t *testing.T) {
	resp := &llm.Response{Choices: []llm.Choice{{Text: "twelve bytes", ToolCalls: []llm.ToolCall{{Name: "f", Arguments: "{}"}}}},
		Usage: llm.Usage{PromptTokens: 7, CompletionTokens: 3, TotalTokens: 10}}
	if got := Of(resp, true, 99); got != resp.Usage {
		t.Errorf("reported: got %+v, want it unchanged", got)
	}
	got := Of(resp, false, 99)
	if want := (llm.Usage{PromptTokens: 99, CompletionTokens: 4, TotalTokens: 103, Estimated: true}); got != want {
		t.Errorf("not reported: got %+v, want %+v", got, want)
	}
	// The relay's estimate: the answer counted, the prompt left at zero.
	resp.Usage = llm.Usage{CompletionTokens: 4, TotalTokens: 4, Estimated: true}
	if got := Of(resp, true, 20); got.PromptTokens != 20 || got.TotalTokens != 24 || !got.Estimated {
		t.Errorf("relay estimate: got %+v, want the prompt estimate added", got)
	}
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: "12345678"}}}}}
	if got := PromptTokens(req); got != 2 {
		t.Errorf("PromptTokens: got %d, want 2", got)
	}
}

func TestReport(t *testing.T) {
	ctx := context.Background()
	m := &Memory{}
	add := func(day, key, alias, target string, c Counts) {
		t.Helper()
		if err := m.Add(ctx, day, Labels{Key: key, Alias: alias, Target: target}, c); err != nil {
			t.Fatal(err)
		}
	}
	add("2026-06-01", "k1", "default", "openai/gpt-4.1-mini", Counts{Requests: 1, InputTokens: 10, OutputTokens: 5, CostNano: 100})
	add("2026-06-01", "k1", "default", "openai/gpt-4.1-mini", Counts{Requests: 1, InputTokens: 10, OutputTokens: 5, CostNano: 100, Errors: 1})
	add("2026-06-02", "k1", "fast", "sim/echo", Counts{Requests: 1, Fallbacks: 1, Estimated: 1})
	add("2026-06-02", "k2", "default", "anthropic/claude-sonnet-4-5", Counts{Requests: 1, CostNano: 7})
	add("2026-06-05", "k2", "default", "anthropic/claude-sonnet-4-5", Counts{Requests: 1, CostNano: 1000})
	if err := m.Add(ctx, "2026-06-10", Labels{Key: "k3", Alias: "default", Target: "sim/echo", Team: "search"}, Counts{Requests: 2, CostNano: 50}); err != nil {
		t.Fatal(err)
	}
	june := func(q Query) Query {
		q.From, q.To = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC)
		return q
	}
	day := func(s string) time.Time { d, _ := time.Parse(DayLayout, s); return d }
	tests := []struct {
		name  string
		q     Query
		names []string
		total Counts
	}{
		{"by key", Query{From: day("2026-06-01"), To: day("2026-06-02"), GroupBy: ByKey}, []string{"k1", "k2"},
			Counts{Requests: 4, InputTokens: 20, OutputTokens: 10, CostNano: 207, Errors: 1, Fallbacks: 1, Estimated: 1}},
		{"by day, one key", Query{Key: "k1", From: day("2026-06-01"), To: day("2026-06-30"), GroupBy: ByDay}, []string{"2026-06-01", "2026-06-02"},
			Counts{Requests: 3, InputTokens: 20, OutputTokens: 10, CostNano: 200, Errors: 1, Fallbacks: 1, Estimated: 1}},
		{"by target", Query{From: day("2026-06-02"), To: day("2026-06-05"), GroupBy: ByTarget}, []string{"anthropic/claude-sonnet-4-5", "sim/echo"},
			Counts{Requests: 3, CostNano: 1007, Fallbacks: 1, Estimated: 1}},
		{"by alias", Query{From: day("2026-06-01"), To: day("2026-06-05"), GroupBy: ByAlias}, []string{"default", "fast"},
			Counts{Requests: 5, InputTokens: 20, OutputTokens: 10, CostNano: 1207, Errors: 1, Fallbacks: 1, Estimated: 1}},
		// A caller's scope (issue 37): their teams' rows and their own keys', in the lines and
		// the total alike; an empty scope, or one of the empty team name, sums nothing.
		{"scope of a team", june(Query{GroupBy: ByKey, Scope: &Scope{Teams: []string{"search"}}}), []string{"k3"}, Counts{Requests: 2, CostNano: 50}},
		{"scope of a team and a key", june(Query{GroupBy: ByTeam, Scope: &Scope{Teams: []string{"search"}, Keys: []string{"k2"}}}),
			[]string{"", "search"}, Counts{Requests: 4, CostNano: 1057}},
		{"scope and another team", june(Query{Team: "ads", GroupBy: ByKey, Scope: &Scope{Teams: []string{"search"}}}), nil, Counts{}},
		{"scope empty", june(Query{GroupBy: ByKey, Scope: &Scope{}}), nil, Counts{}},
		{"scope of no team", june(Query{GroupBy: ByKey, Scope: &Scope{Teams: []string{""}}}), nil, Counts{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, total, err := Report(ctx, m, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, l := range lines {
				names = append(names, l.Name)
			}
			if len(names) != len(tt.names) || total != tt.total {
				t.Fatalf("got lines %v total %+v, want %v %+v", names, total, tt.names, tt.total)
			}
			for i := range names {
				if names[i] != tt.names[i] {
					t.Errorf("line %d: got %q, want %q", i, names[i], tt.names[i])
				}
			}
		})
	}
}

// 50 concurrent calls against a budget for about 10: they stop at the budget, passing it
// by at most one reservation, and a new day starts afresh.
func TestMemoryBudgets(t *testing.T) {
	ctx := context.Background()
	b := &MemoryBudgets{}
	now := time.Date(2026, 6, 1, 23, 0, 0, 0, time.UTC)
	const cost, limit = 6, 62
	var mu sync.Mutex
	passed := 0
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			r := NewReservation("k", Budget{Daily: limit, Monthly: 1000}, cost, now)
			v, err := b.Reserve(ctx, r)
			if err != nil {
				t.Error(err)
				return
			}
			if !v.OK {
				if v.Over != "daily" || v.Spent < limit {
					t.Errorf("got a refusal %+v, want daily with at least %d spent", v, limit)
				}
				return
			}
			if err := b.Settle(ctx, r, cost); err != nil {
				t.Error(err)
			}
			mu.Lock()
			passed++
			mu.Unlock()
		})
	}
	wg.Wait()
	if spent := passed * cost; passed != 11 || spent > limit+cost {
		t.Errorf("got %d calls through (%d spent), want 11: the budget, passed by at most one reservation", passed, spent)
	}
	next := NewReservation("k", Budget{Daily: limit, Monthly: 1000}, cost, now.Add(2*time.Hour))
	if v, _ := b.Reserve(ctx, next); !v.OK {
		t.Errorf("the next day: got %+v, want a fresh daily budget", v)
	}
	// The month holds 11 calls and this one: 72. A monthly cap of 70 refuses the next.
	over := NewReservation("k", Budget{Monthly: 70}, cost, now.Add(2*time.Hour))
	if v, _ := b.Reserve(ctx, over); v.OK || v.Over != "monthly" || v.Spent != 72 {
		t.Errorf("monthly: got %+v, want refused with 72 spent", v)
	}
	// Settling with less gives the difference back.
	_ = b.Settle(ctx, next, 0)
	if v, _ := b.Reserve(ctx, over); !v.OK {
		t.Errorf("after a settle of 0: got %+v, want room in the month", v)
	}
}

// TestMeterClose: the request's reservation settles at its real cost, and its row names
// the target charged last (the served one when none was), with a cache hit's saved tokens.
func TestMeterClose(t *testing.T) {
	ctx := t.Context()
	b, st := &MemoryBudgets{}, &Memory{}
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	m := &Meter{Start: start, Prices: NewPrices(map[string]Price{"p/m": {Input: 1, Output: 1}})}
	r := NewReservation("k", Budget{Daily: Nano(1)}, Nano(0.5), start)
	if v, _ := b.Reserve(ctx, r); !v.OK {
		t.Fatal("reserve")
	}
	m.Held = append(m.Held, r)
	m.Charge("p/m", "m", llm.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15})
	m.Close(ctx, b, st, Outcome{Labels: Labels{Key: "k", Alias: "chat", Target: "served/x"}, Attempts: 2})
	(&Meter{Start: start}).Close(ctx, nil, st, Outcome{Labels: Labels{Key: "k", Alias: "chat", Target: "cache/x"}, Hit: true, Saved: 15})
	(&Meter{Start: start}).Close(ctx, nil, st, Outcome{Labels: Labels{Key: "k"}}) // not a model call
	rows := map[Labels]Counts{}
	_ = st.Rows(ctx, []string{"2026-12-01"}, func(_ string, r Row) { rows[r.Labels] = r.Counts })
	if len(rows) != 2 {
		t.Fatalf("rows %+v", rows)
	}
	if c := rows[Labels{Key: "k", Alias: "chat", Target: "p/m"}]; c.Requests != 1 || c.Fallbacks != 1 || c.CostNano != m.Cost || c.OutputTokens != 5 {
		t.Errorf("charged row %+v", c)
	}
	if c := rows[Labels{Key: "k", Alias: "chat", Target: "cache/x"}]; c.CacheHits != 1 || c.SavedTokens != 15 || c.CostNano != 0 {
		t.Errorf("hit row %+v", c)
	}
	// Settled: the day holds the real cost, not the reservation.
	if v, _ := b.Reserve(ctx, NewReservation("k", Budget{Daily: m.Cost + 1}, 0, start)); !v.OK {
		t.Errorf("after Close the day holds more than the cost: %+v", v)
	}
	if v, _ := b.Reserve(ctx, NewReservation("k", Budget{Daily: m.Cost}, 0, start)); v.OK {
		t.Errorf("after Close the day does not hold the cost")
	}
}
