package admin

import (
	"math"

	"github.com/sluice-gw/sluice/internal/auth"
)

// A key's budget and guardrails as the admin API shows and takes them (keys.go).

// Budget is a key's budget: USD per UTC day and month, 0 for no cap.
type Budget struct {
	DailyUSD   float64 `json:"daily_usd"`
	MonthlyUSD float64 `json:"monthly_usd"`
}

// BudgetInput is the budget of POST and PATCH: members present replace the key's.
type BudgetInput struct {
	DailyUSD   *float64 `json:"daily_usd"`
	MonthlyUSD *float64 `json:"monthly_usd"`
}

func keyExtras(k *auth.Key) (Budget, []string) {
	gs := k.Guardrails
	if gs == nil {
		gs = []string{}
	}
	return Budget{DailyUSD: k.DailyUSD, MonthlyUSD: k.MonthlyUSD}, gs
}

// maxBudgetUSD keeps a budget within the nano-USD counters (int64).
const maxBudgetUSD = 1e9

// applyExtras sets the budget and guardrails present in in on k, and checks them; that the
// guardrails exist is the edge's to check.
func (in *KeyInput) applyExtras(k *auth.Key) error {
	if b := in.Budget; b != nil {
		for _, v := range []*float64{b.DailyUSD, b.MonthlyUSD} {
			if v != nil && (*v < 0 || *v > maxBudgetUSD || math.IsNaN(*v)) {
				return Bad("budget", "budget.daily_usd and budget.monthly_usd are USD from 0 (no cap) to 1e9.")
			}
		}
		if b.DailyUSD != nil {
			k.DailyUSD = *b.DailyUSD
		}
		if b.MonthlyUSD != nil {
			k.MonthlyUSD = *b.MonthlyUSD
		}
	}
	if in.Guardrails != nil {
		if len(in.Guardrails) > 64 {
			return Bad("guardrails", "guardrails lists at most 64 names.")
		}
		k.Guardrails = in.Guardrails
	}
	return nil
}
