package usage

import (
	"context"
	"slices"
	"strings"
	"time"
)

// Group names the label a report sums by.
type Group string

const (
	ByKey    Group = "key"
	ByAlias  Group = "alias"
	ByTarget Group = "target"
	ByDay    Group = "day"
	ByTeam   Group = "team" // "" is the requests of keys without a team
)

// MaxDays bounds the span of one report.
const MaxDays = 366

// Query selects the rows of a report: the days From to To (UTC, both included), of one key
// when Key is set and of one team when Team is, within Scope, summed by GroupBy.
type Query struct {
	Key      string
	Team     string
	From, To time.Time
	GroupBy  Group
	// Scope narrows the rows to what a caller who is not admin may read (issue 37): a row
	// outside it is never summed, into a line or the total. nil: every row.
	Scope *Scope
}

// Scope is the rows of Teams (a row's team, the key's when the request was made) and those
// of Keys (key ids: a caller's own keys, teamless ones included). An empty Scope selects
// nothing, and so does the empty team name: a scope fails closed. The request log's
// logstore.Scope is the same rule over its records.
type Scope struct {
	Teams, Keys []string
}

// Holds reports whether s (nil: no scope) holds the row of l.
func (s *Scope) Holds(l Labels) bool {
	return s == nil || l.Team != "" && slices.Contains(s.Teams, l.Team) || slices.Contains(s.Keys, l.Key)
}

// Line is one line of a report: the value of the grouping label and its sums.
type Line struct {
	Name string
	Counts
}

// Days lists the days of q, in order.
func (q Query) Days() []string {
	var out []string
	to := q.To.UTC().Format(DayLayout)
	for d := q.From.UTC(); len(out) < MaxDays; d = d.AddDate(0, 0, 1) {
		s := d.Format(DayLayout)
		if s > to {
			break
		}
		out = append(out, s)
	}
	return out
}

// Report sums the rows q selects by its group, lines sorted by name, and their total.
func Report(ctx context.Context, s Store, q Query) ([]Line, Counts, error) {
	sums := map[string]*Counts{}
	var total Counts
	err := s.Rows(ctx, q.Days(), func(day string, r Row) {
		if q.Key != "" && r.Key != q.Key || q.Team != "" && r.Team != q.Team || !q.Scope.Holds(r.Labels) {
			return
		}
		name := day
		switch q.GroupBy {
		case ByKey:
			name = r.Key
		case ByAlias:
			name = r.Alias
		case ByTarget:
			name = r.Target
		case ByTeam:
			name = r.Team
		}
		c := sums[name]
		if c == nil {
			c = &Counts{}
			sums[name] = c
		}
		c.Add(r.Counts)
		total.Add(r.Counts)
	})
	if err != nil {
		return nil, Counts{}, err
	}
	lines := make([]Line, 0, len(sums))
	for name, c := range sums {
		lines = append(lines, Line{Name: name, Counts: *c})
	}
	slices.SortFunc(lines, func(a, b Line) int { return strings.Compare(a.Name, b.Name) })
	return lines, total, nil
}
