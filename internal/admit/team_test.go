package admit

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/fallback"
	"github.com/sluice-gw/sluice/internal/limit"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

func teamPolicy(t *testing.T, teams ...*auth.Team) *Policy {
	t.Helper()
	return &Policy{Limiter: &limit.Memory{}, Budgets: &usage.MemoryBudgets{}, Teams: auth.NewTeams(teams, &auth.TeamMemory{})}
}

// A key's request passes its team's model access as well as its own; a key whose team is
// gone is refused, never let through unchecked.
func TestTeamModels(t *testing.T) {
	ctx := t.Context()
	p := teamPolicy(t, &auth.Team{Name: "search", Models: []string{"default", "claude-*"}})
	key := &auth.Key{ID: "k1", Name: "bot", Models: []string{"default", "fast"}, Team: "search"}
	for model, want := range map[string]string{"default": "", "fast": "team 'search'", "claude-x": "This API key is not allowed"} {
		err := p.Ticket(key, time.Now()).Admit(ctx, Ask{Model: model})
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: got %v, want admitted", model, err)
		case want != "" && (!Gated(err) || llm.HTTPStatus(err) != http.StatusForbidden || !strings.Contains(errText(err), want)):
			t.Errorf("%s: got %v, want a 403 saying %q", model, err, want)
		}
	}
	gone := &auth.Key{ID: "k2", Name: "orphan", Models: []string{"*"}, Team: "deleted"}
	if err := p.Ticket(gone, time.Now()).Admit(ctx, Ask{Model: "default"}); llm.HTTPStatus(err) != http.StatusForbidden ||
		!strings.Contains(errText(err), "team 'deleted', which does not exist") {
		t.Errorf("got %v, want a 403 for a key of a team that does not exist", err)
	}
}

// The team's rpm holds for all its keys together; a key's own refusal gives back what the
// team's limit took, so that the team's count is exactly the requests admitted.
func TestTeamLimits(t *testing.T) {
	ctx := t.Context()
	team := &auth.Team{Name: "search", Models: []string{"*"}, RPM: 3, TPM: 1000}
	p := teamPolicy(t, team)
	a := &auth.Key{ID: "ka", Name: "a", Models: []string{"*"}, Team: "search"}
	b := &auth.Key{ID: "kb", Name: "b", Models: []string{"*"}, Team: "search", RPM: 1}
	if _, _, err := p.Reserve(ctx, b, team, 10); err != nil {
		t.Fatal(err)
	}
	// b's own limit refuses: the team's reservation is released, so a still gets two.
	if _, _, err := p.Reserve(ctx, b, team, 10); !strings.Contains(errText(err), "Rate limit reached for key 'b' on requests per minute: limit 1") {
		t.Fatalf("got %v, want b's own limit", err)
	}
	h, res, err := p.Reserve(ctx, a, team, 900)
	if err != nil || res.Requests.Remaining != 1 {
		t.Fatalf("got %+v, %v, want admitted with 1 request of the team left", res, err)
	}
	// The team's tokens are shared: a's reservation leaves 90 for anyone.
	if _, _, err := p.Reserve(ctx, a, team, 100); !strings.Contains(errText(err), "Rate limit reached for team 'search' on tokens per minute: limit 1000, remaining 90") ||
		retryAfter(err) <= 0 {
		t.Fatalf("got %v, want the team's token limit", err)
	}
	p.Reconcile(ctx, h, 100) // a used 100 of its 900: the team gets 800 back
	if _, _, err := p.Reserve(ctx, a, team, 500); err != nil {
		t.Fatalf("got %v after the reconciliation, want admitted", err)
	}
	_, _, err = p.Reserve(ctx, a, team, 1)
	if le := (*llm.Error)(nil); !errors.As(err, &le) || le.Kind != llm.RateLimited || !strings.Contains(le.Message, "team 'search' on requests per minute: limit 3") {
		t.Fatalf("got %v, want the team's rpm", err)
	}
}

// The team's budget holds for all its keys together; a request settles its real cost to
// both budgets; a key's refusal releases the team's reservation.
func TestTeamBudget(t *testing.T) {
	ctx := t.Context()
	prices := usage.NewPrices(map[string]usage.Price{"p": {Input: 1, Output: 1}})
	chain := &fallback.Chain{Targets: []fallback.Target{{Name: "p", Model: "m"}}}
	team := &auth.Team{Name: "search", Models: []string{"*"}, DailyUSD: 0.01}
	p := teamPolicy(t, team)
	p.Prices = prices
	out := 100
	req := &llm.Request{MaxTokens: &out}
	a := &auth.Key{ID: "ka", Name: "a", Models: []string{"*"}, Team: "search"}
	b := &auth.Key{ID: "kb", Name: "b", Models: []string{"*"}, Team: "search", DailyUSD: 0.005}
	rs, err := p.ReserveBudget(ctx, b, team, chain, req, 400, time.Now())
	if err != nil || len(rs) != 2 || rs[0].Key != "team:search" || rs[1].Key != "kb" {
		t.Fatalf("got %+v, %v, want the team's then the key's reservation", rs, err)
	}
	m := usage.Meter{Held: rs, Cost: int64(usage.Nano(0.006))}
	m.Settle(ctx, p.Budgets) // b's day is spent; the team's holds 0.006 of 0.01
	if _, err := p.ReserveBudget(ctx, b, team, chain, req, 400, time.Now()); !strings.Contains(errText(err), "Key 'b' has used its budget of $0.01") {
		t.Fatalf("got %v, want b's own budget spent", err)
	}
	// b's refusal released the team's reservation: a still has the team's 0.004.
	rs, err = p.ReserveBudget(ctx, a, team, chain, req, 400, time.Now())
	if err != nil || len(rs) != 1 {
		t.Fatalf("got %+v, %v, want a admitted on the team's budget alone", rs, err)
	}
	m = usage.Meter{Held: rs, Cost: int64(usage.Nano(0.004))}
	m.Settle(ctx, p.Budgets)
	_, err = p.ReserveBudget(ctx, a, team, chain, req, 400, time.Now())
	if le := (*llm.Error)(nil); !errors.As(err, &le) || le.Code != "budget_exceeded" ||
		!strings.Contains(le.Message, "Team 'search' has used its budget of $0.01 for this day (UTC) ($0.0100 spent") {
		t.Fatalf("got %v, want the team's budget spent", err)
	}
}

// A run's later rounds count against the team too.
func TestTeamRounds(t *testing.T) {
	ctx := context.Background()
	team := &auth.Team{Name: "search", RPM: 2}
	p := teamPolicy(t, team)
	key := &auth.Key{ID: "k", Name: "a", Models: []string{"*"}, Team: "search"}
	r := p.Rounds(key, team, nil)
	for i, want := range []bool{true, true, false} {
		if err := r.Admit(ctx, &llm.Request{}, 0); (err == nil) != want {
			t.Errorf("round %d: got %v, want admitted %v", i, err, want)
		}
	}
}

// A batch's hold must fit whole in the team's budget and in the key's; when the key's
// refuses, the team's hold is released, so the team's budget holds exactly what was
// admitted (issue 48).
func TestTeamHolds(t *testing.T) {
	ctx := t.Context()
	team := &auth.Team{Name: "batchers", Models: []string{"*"}, DailyUSD: 0.01}
	p := teamPolicy(t, team)
	p.Prices = usage.NewPrices(map[string]usage.Price{"p/m": {Input: 2}})
	small := &auth.Key{ID: "ks", Name: "small", Models: []string{"*"}, Team: team.Name, DailyUSD: 0.001}
	big := &auth.Key{ID: "kb", Name: "big", Models: []string{"*"}, Team: team.Name}
	chain := &fallback.Chain{Alias: "m", Targets: []fallback.Target{{Name: "p/m", Model: "m"}}}
	until := time.Now().Add(time.Hour)
	// 2,000 bytes: 500 tokens at $2 per million, 1,000,000 nano-USD: the small key's whole day.
	hs, err := p.HoldBudget(ctx, small, team, chain, nil, 2000, until)
	if err != nil || len(hs) != 2 || hs[0].ID != hs[1].ID || hs[0].Key != team.Scope() || hs[1].Key != small.ID {
		t.Fatalf("hold: %+v, %v; want the team's and the key's, one ID", hs, err)
	}
	if _, err := p.HoldBudget(ctx, small, team, chain, nil, 4, until); !strings.Contains(errText(err), "Key 'small' has used its budget") {
		t.Fatalf("a second hold of the small key: %v, want its own budget's refusal", err)
	}
	spent := func(scope string) int64 {
		v, _ := p.Budgets.Reserve(ctx, usage.NewReservation(scope, usage.Budget{Daily: 1}, 0, time.Now()))
		return v.Spent
	}
	if got := spent(team.Scope()); got != 1_000_000 {
		t.Errorf("the team holds %d nano-USD, want 1000000: the refused hold released", got)
	}
	// The team's budget: 10,000,000 nano-USD; 9,000,000 more fit, 9,000,002 do not.
	if _, err := p.HoldBudget(ctx, big, team, chain, nil, 18004, until); !strings.Contains(errText(err), "Team 'batchers' has used its budget") {
		t.Errorf("a hold past the team's budget: %v, want the team's refusal", err)
	}
	if _, err := p.HoldBudget(ctx, big, team, chain, nil, 18000, until); err != nil {
		t.Errorf("a hold that fits the team's budget: %v", err)
	}
	p.ReleaseBudget(ctx, hs)
	if got := spent(team.Scope()); got != 9_000_000 {
		t.Errorf("after the release the team holds %d nano-USD, want 9000000", got)
	}
}
