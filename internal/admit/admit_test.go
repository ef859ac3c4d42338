package admit

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/limit"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

func TestCost(t *testing.T) {
	for _, tc := range []struct {
		body        int
		max, n, tpm int64
		embeddings  bool
		want        int64
	}{
		{400, 0, 0, 0, false, 100 + DefaultOutputTokens}, // max_tokens unset: the default answer
		{400, 50, 3, 0, false, 100 + 150},                // n choices
		{400, 50, 1000, 0, false, 100 + 50*128},          // n is capped
		{400, 0, 1, 300, false, 300},                     // the default is capped at the key's tpm...
		{4000, 0, 1, 300, false, 1000},                   // ...but never below the prompt
		{4000, 2000, 1, 300, false, 3000},                // an explicit max_tokens is not capped
		{401, 99, 1, 0, true, 101},                       // embeddings: the prompt only
	} {
		if got := Cost(tc.body, tc.max, tc.n, tc.embeddings, tc.tpm); got != tc.want {
			t.Errorf("Cost(%d, %d, %d, %v, %d) = %d, want %d", tc.body, tc.max, tc.n, tc.embeddings, tc.tpm, got, tc.want)
		}
	}
}

// TestReserve: a refusal names the key and the limit, never the secret; a request too large
// for the limit gets no Retry-After; reconciling frees what the call did not use.
func TestReserve(t *testing.T) {
	ctx := t.Context()
	p := &Policy{Limiter: &limit.Memory{}}
	key := &auth.Key{ID: "k1", Name: "ci", Hash: "secret-hash", RPM: 2, TPM: 1000}
	h, res, err := p.Reserve(ctx, key, nil, 900)
	if err != nil || h == nil || res.Tokens.Remaining != 100 {
		t.Fatalf("Reserve = %v, %+v, %v", h, res, err)
	}
	_, _, err = p.Reserve(ctx, key, nil, 500)
	if !strings.Contains(errText(err), "Rate limit reached for key 'ci' on tokens per minute: limit 1000, remaining 100") || retryAfter(err) <= 0 {
		t.Fatalf("over tpm: %v", err)
	}
	p.Reconcile(ctx, h, 100) // the call used 100 of its 900
	if _, res, err = p.Reserve(ctx, key, nil, 500); err != nil || res.Requests.Remaining != 0 {
		t.Fatalf("after Reconcile: %+v, %v", res, err)
	}
	_, _, err = p.Reserve(ctx, key, nil, 1)
	if !strings.Contains(errText(err), "on requests per minute: limit 2") {
		t.Fatalf("over rpm: %v", err)
	}
	_, res, err = p.Reserve(ctx, &auth.Key{ID: "k2", Name: "big", TPM: 10}, nil, 11)
	if !res.Never || retryAfter(err) != 0 || !strings.Contains(errText(err), "Request too large for key 'big'") {
		t.Fatalf("too large: %+v, %v", res, err)
	}
	if strings.Contains(errText(err), "secret") {
		t.Fatal("a refusal quotes the key")
	}
	if h, _, err := (&Policy{}).Reserve(ctx, key, nil, 1e9); h != nil || err != nil {
		t.Fatal("no limiter: something was held or refused")
	}
	if _, _, err := (&Policy{Limiter: failing{}}).Reserve(ctx, key, nil, 1); llm.KindOf(err) != llm.Unavailable || llm.HTTPStatus(err) != 503 {
		t.Fatalf("limiter down: %v", err)
	}
}

// TestBudget: the estimate is at the chain's most expensive target; a spent budget is
// refused; a run's later rounds reserve only what they cost beyond what the request holds.
func TestBudget(t *testing.T) {
	ctx := t.Context()
	prices := usage.NewPrices(map[string]usage.Price{"cheap": {Input: 1, Output: 1}, "dear": {Input: 10, Output: 10}})
	chain := &fallback.Chain{Targets: []fallback.Target{{Name: "cheap", Model: "m"}, {Name: "dear", Model: "m"}}}
	p := &Policy{Budgets: &usage.MemoryBudgets{}, Prices: prices}
	out := 100
	req := &llm.Request{MaxTokens: &out}
	if got, want := p.Estimate(chain, req, 400), usage.Cost(usage.Price{Input: 10, Output: 10}, llm.Usage{PromptTokens: 100, CompletionTokens: 100}); got != want || want == 0 {
		t.Fatalf("Estimate = %d, want %d (the dear target)", got, want)
	}
	key := &auth.Key{ID: "k", Name: "ci", DailyUSD: 0.01}
	rs, err := p.ReserveBudget(ctx, key, nil, chain, req, 400, time.Now())
	if err != nil || len(rs) != 1 || rs[0].Amount == 0 {
		t.Fatalf("ReserveBudget = %+v, %v", rs, err)
	}
	r := rs[0]
	rounds := p.Rounds(key, nil, []usage.Reservation{r})
	if err := rounds.Admit(ctx, req, r.Amount/2); err != nil || len(rounds.Reservations()) != 0 {
		t.Fatalf("a round within what is held: %v, %d reservations", err, len(rounds.Reservations()))
	}
	if err := rounds.Admit(ctx, req, r.Amount+5); err != nil || len(rounds.Reservations()) != 1 || rounds.Reservations()[0].Amount != 5 {
		t.Fatalf("a round beyond it: %v, %+v", err, rounds.Reservations())
	}
	_ = p.Budgets.Settle(ctx, r, int64(usage.Nano(0.02))) // the request cost more than the day's budget
	_, err = p.ReserveBudget(ctx, key, nil, chain, req, 400, time.Now())
	if le := (*llm.Error)(nil); !errors.As(err, &le) || le.Code != "budget_exceeded" || !strings.Contains(le.Message, "$0.01 for this day (UTC)") {
		t.Fatalf("spent: %v", err)
	}
	if err := rounds.Admit(ctx, req, r.Amount+6); llm.KindOf(err) != llm.RateLimited {
		t.Fatalf("a round after the budget is spent: %v", err)
	}
	if p.Rounds(&auth.Key{ID: "free"}, nil, nil) != nil || p.Rounds(nil, nil, nil) != nil {
		t.Error("Rounds of a key with nothing to check")
	}
}

func TestAuthError(t *testing.T) {
	down := errors.New("redis: connection refused")
	for _, tc := range []struct {
		err      error
		failOpen bool
		status   int
		says     string
	}{
		{auth.ErrMissing, false, 401, "didn't provide"},
		{auth.ErrInvalid, true, 401, "Incorrect API key"},
		{auth.ErrExpired, false, 401, "expired"},
		{down, true, 503, "key store (Redis)"},
		{down, false, 503, "on_failure: closed"},
	} {
		got := AuthError(tc.err, tc.failOpen)
		if llm.HTTPStatus(got) != tc.status || !strings.Contains(errText(got), tc.says) || strings.Contains(errText(got), "connection refused") {
			t.Errorf("AuthError(%v, %v) = %d %v", tc.err, tc.failOpen, llm.HTTPStatus(got), got)
		}
	}
}

type failing struct{}

func (failing) Reserve(context.Context, limit.Ask) (limit.Result, error) {
	return limit.Result{}, errors.New("down")
}
func (failing) Reconcile(context.Context, string, string, limit.Rule, int64) error { return nil }
func (failing) Release(context.Context, string, string) error                      { return nil }

func errText(err error) string {
	var le *llm.Error
	if errors.As(err, &le) {
		return le.Message
	}
	return ""
}

func retryAfter(err error) time.Duration {
	var le *llm.Error
	if errors.As(err, &le) {
		return le.RetryAfter
	}
	return -1
}
