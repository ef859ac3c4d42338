package admin

import (
	"net/url"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/logstore"
	"github.com/sluice-gw/sluice/internal/usage"
)

// usageSums are the counters of one line of GET /admin/usage, and of its total, in one
// shape whatever answers (issue 50): the account or the request log (its rollups). A
// counter a source does not keep is null: the log keeps no fallbacks, estimates, saved
// tokens or 1-hour cache writes; the account no first-token times.
// CacheReadTokens are the prompt tokens read from the provider's prompt cache (the
// account's cached tokens, the records' cache_read_tokens), part of InputTokens.
type usageSums struct {
	Requests         int64    `json:"requests"`
	Errors           int64    `json:"errors"`
	InputTokens      int64    `json:"input_tokens"`
	OutputTokens     int64    `json:"output_tokens"`
	CacheReadTokens  int64    `json:"cache_read_tokens"`
	CacheWriteTokens int64    `json:"cache_write_tokens"`
	CostUSD          float64  `json:"cost_usd"`
	SavedUSD         float64  `json:"saved_usd"`
	CacheHits        int64    `json:"cache_hits"`
	P95FirstTokenMS  *float64 `json:"p95_first_token_ms"`
	// The account's alone.
	Fallbacks          *int64 `json:"fallbacks"`
	Estimated          *int64 `json:"estimated"`
	SavedTokens        *int64 `json:"saved_tokens"`
	CacheWrite1hTokens *int64 `json:"cache_write_1h_tokens"`
}

func sums(c usage.Counts) usageSums {
	return usageSums{Requests: c.Requests, InputTokens: c.InputTokens, OutputTokens: c.OutputTokens,
		CacheReadTokens: c.CachedTokens, CostUSD: usage.USD(c.CostNano), Errors: c.Errors, Fallbacks: &c.Fallbacks,
		Estimated: &c.Estimated, CacheHits: c.CacheHits, SavedTokens: &c.SavedTokens,
		CacheWriteTokens: c.CacheWriteTokens, CacheWrite1hTokens: &c.CacheWrite1hTokens, SavedUSD: usage.USD(c.SavedNano)}
}

// logSums are the sums of a usage row of the request log; p95 its first-token p95 (the
// total's is of the merged sketches).
func logSums(u *logstore.UsageRow, p95 float64) usageSums {
	return usageSums{Requests: u.Requests, Errors: u.Errors, InputTokens: u.TokensIn, OutputTokens: u.TokensOut,
		CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens, CostUSD: u.CostUSD, SavedUSD: u.SavedUSD,
		CacheHits: u.CacheHits, P95FirstTokenMS: &p95}
}

// usageLine is one line: its time bucket (RFC 3339: the hour or day it sums, or the range's
// first day when not bucketed), its group (the value of the label grouped by, "" when not
// grouped), that value again under the label's own name for key, alias, target, team and
// day, the key's name when grouped by key (the log's), then its sums.
type usageLine struct {
	Bucket  string  `json:"bucket"`
	Group   string  `json:"group"`
	Key     *string `json:"key,omitempty"`
	Alias   *string `json:"alias,omitempty"`
	Target  *string `json:"target,omitempty"`
	Day     *string `json:"day,omitempty"`
	Team    *string `json:"team,omitempty"` // "": keys without a team
	KeyName string  `json:"key_name,omitempty"`
	usageSums
}

// label sets the member of l named by the grouping g (key, alias, target, team, day) to
// its group.
func (l *usageLine) label(g string) {
	name := l.Group
	switch g {
	case "key":
		l.Key = &name
	case "alias":
		l.Alias = &name
	case "target":
		l.Target = &name
	case "team":
		l.Team = &name
	case "day":
		l.Day = &name
	}
}

// usageAnswer is the answer of GET /admin/usage, whatever its source ("account" or
// "logs"): the range, grouping and bucket asked, the lines and their total.
type usageAnswer struct {
	Object  string      `json:"object"`
	Source  string      `json:"source"`
	From    string      `json:"from"`
	To      string      `json:"to"`
	GroupBy string      `json:"group_by"`
	Bucket  string      `json:"bucket"`
	Key     *string     `json:"key"`
	Team    *string     `json:"team,omitempty"`
	Data    []usageLine `json:"data"`
	Total   usageSums   `json:"total"`
}

// usageHead is the answer's head for q: everything but the lines and the total.
func usageHead(source string, q usage.Query, groupBy, bucket string) usageAnswer {
	ans := usageAnswer{Object: "usage", Source: source, From: q.From.Format(usage.DayLayout), To: q.To.Format(usage.DayLayout),
		GroupBy: groupBy, Bucket: bucket, Data: []usageLine{}}
	if q.Key != "" {
		ans.Key = &q.Key
	}
	if q.Team != "" {
		ans.Team = &q.Team
	}
	return ans
}

// Report is the answer of GET /admin/usage for q from the account: its lines (each with the
// value of the label grouped by), and their total.
func Report(q usage.Query, lines []usage.Line, total usage.Counts) any {
	ans := usageHead("account", q, string(q.GroupBy), "")
	ans.Total = sums(total)
	from := q.From.Format(time.RFC3339)
	for _, l := range lines {
		line := usageLine{Bucket: from, Group: l.Name, usageSums: sums(l.Counts)}
		if q.GroupBy == usage.ByDay {
			if d, err := time.Parse(usage.DayLayout, l.Name); err == nil {
				line.Bucket = d.Format(time.RFC3339)
			}
		}
		line.label(string(q.GroupBy))
		ans.Data = append(ans.Data, line)
	}
	return ans
}

// logReport is the answer of GET /admin/usage for q from the request log's rows, grouped by
// g and bucketed by b.
func logReport(q usage.Query, g, b string, rows []logstore.UsageRow) usageAnswer {
	ans := usageHead("logs", q, g, b)
	var total logstore.UsageRow
	for i := range rows {
		u := &rows[i]
		line := usageLine{Bucket: u.Bucket.Format(time.RFC3339), Group: u.Group, KeyName: u.KeyName,
			usageSums: logSums(u, u.P95FirstTokenMS)}
		line.label(g)
		ans.Data = append(ans.Data, line)
		total.Requests += u.Requests
		total.Errors += u.Errors
		total.TokensIn += u.TokensIn
		total.TokensOut += u.TokensOut
		total.CacheReadTokens += u.CacheReadTokens
		total.CacheWriteTokens += u.CacheWriteTokens
		total.CostUSD += u.CostUSD
		total.SavedUSD += u.SavedUSD
		total.CacheHits += u.CacheHits
		total.FirstToken.Merge(&u.FirstToken)
	}
	ans.Total = logSums(&total, total.FirstToken.Quantile(0.95))
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
