package admin

import (
	"net/url"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// usageSums are the counters of one line of GET /admin/usage.
type usageSums struct {
	Requests     int64   `json:"requests"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CachedTokens int64   `json:"cached_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	Errors       int64   `json:"errors"`
	Fallbacks    int64   `json:"fallbacks"`
	Estimated    int64   `json:"estimated"`
	CacheHits    int64   `json:"cache_hits"`
	SavedTokens  int64   `json:"saved_tokens"`
	// The provider's prompt cache (issue 46): the tokens written to it (1-hour ones also
	// apart) and what it saved against the input price, negative when writes cost more.
	CacheWriteTokens   int64   `json:"cache_write_tokens"`
	CacheWrite1hTokens int64   `json:"cache_write_1h_tokens"`
	SavedUSD           float64 `json:"saved_usd"`
}

func sums(c usage.Counts) usageSums {
	return usageSums{Requests: c.Requests, InputTokens: c.InputTokens, OutputTokens: c.OutputTokens,
		CachedTokens: c.CachedTokens, CostUSD: usage.USD(c.CostNano), Errors: c.Errors, Fallbacks: c.Fallbacks,
		Estimated: c.Estimated, CacheHits: c.CacheHits, SavedTokens: c.SavedTokens,
		CacheWriteTokens: c.CacheWriteTokens, CacheWrite1hTokens: c.CacheWrite1hTokens, SavedUSD: usage.USD(c.SavedNano)}
}

// usageLine is one line: the value of the label grouped by (only that one is set), then its
// sums.
type usageLine struct {
	Key    *string `json:"key,omitempty"`
	Alias  *string `json:"alias,omitempty"`
	Target *string `json:"target,omitempty"`
	Day    *string `json:"day,omitempty"`
	Team   *string `json:"team,omitempty"` // "": keys without a team
	usageSums
}

type usageAnswer struct {
	Object  string      `json:"object"`
	From    string      `json:"from"`
	To      string      `json:"to"`
	GroupBy string      `json:"group_by"`
	Key     *string     `json:"key"`
	Team    *string     `json:"team,omitempty"`
	Data    []usageLine `json:"data"`
	Total   usageSums   `json:"total"`
}

// Report is the answer of GET /admin/usage for q: its lines (each with the value of the label
// grouped by), and their total.
func Report(q usage.Query, lines []usage.Line, total usage.Counts) any {
	ans := usageAnswer{Object: "usage", From: q.From.Format(usage.DayLayout), To: q.To.Format(usage.DayLayout),
		GroupBy: string(q.GroupBy), Data: []usageLine{}, Total: sums(total)}
	if q.Key != "" {
		ans.Key = &q.Key
	}
	if q.Team != "" {
		ans.Team = &q.Team
	}
	for _, l := range lines {
		name := l.Name
		line := usageLine{usageSums: sums(l.Counts)}
		switch q.GroupBy {
		case usage.ByKey:
			line.Key = &name
		case usage.ByAlias:
			line.Alias = &name
		case usage.ByTarget:
			line.Target = &name
		case usage.ByTeam:
			line.Team = &name
		default:
			line.Day = &name
		}
		ans.Data = append(ans.Data, line)
	}
	return ans
}

// UsageQuery reads the query of GET /admin/usage?key=&team=&from=&to=&group_by=key|alias|target|day|team:
// the UTC days from..to (both included; default: this month so far), of one key (its id),
// one team or all, summed by key (default), alias, target, day or team.
func UsageQuery(v url.Values, now time.Time) (usage.Query, error) {
	today := now.UTC().Truncate(24 * time.Hour)
	q := usage.Query{Key: v.Get("key"), Team: v.Get("team"), GroupBy: usage.Group(v.Get("group_by")), To: today}
	switch q.GroupBy {
	case "":
		q.GroupBy = usage.ByKey
	case usage.ByKey, usage.ByAlias, usage.ByTarget, usage.ByDay, usage.ByTeam:
	default:
		return q, badUsage("group_by", "group_by is key, alias, target, day or team.")
	}
	var err error
	if s := v.Get("to"); s != "" {
		if q.To, err = time.Parse(usage.DayLayout, s); err != nil {
			return q, badUsage("to", "to is a UTC day, 2026-06-30.")
		}
	}
	q.From = time.Date(q.To.Year(), q.To.Month(), 1, 0, 0, 0, 0, time.UTC)
	if s := v.Get("from"); s != "" {
		if q.From, err = time.Parse(usage.DayLayout, s); err != nil {
			return q, badUsage("from", "from is a UTC day, 2026-06-01.")
		}
	}
	switch {
	case q.From.After(q.To):
		return q, badUsage("from", "from is after to.")
	case q.To.Sub(q.From) >= usage.MaxDays*24*time.Hour:
		return q, badUsage("from", "A report covers at most 366 days.")
	}
	return q, nil
}

func badUsage(param, msg string) error {
	return &llm.Error{Kind: llm.Invalid, Param: param, Type: "invalid_request_error", Message: msg}
}
