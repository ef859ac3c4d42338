package logstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// usageWant computes what Usage should answer for set, in Go.
func usageWant(set []Record, q UsageQuery) []UsageRow {
	type k struct {
		b time.Time
		g string
	}
	rows := map[k]*UsageRow{}
	for _, r := range set {
		if r.Time.Before(q.From) || !r.Time.Before(q.To) || q.Key != "" && r.KeyID != q.Key || q.Team != "" && r.Team != q.Team ||
			!q.Scope.Holds(&r) {
			continue
		}
		key := k{b: q.From.UTC()}
		switch q.Bucket {
		case Hour:
			key.b = r.Time.UTC().Truncate(time.Hour)
		case Day:
			key.b = day(r.Time)
		}
		switch q.GroupBy {
		case "key":
			key.g = r.KeyID
		case "team":
			key.g = r.Team
		case "alias":
			key.g = r.Alias
		case "target":
			key.g = r.Target
		case "":
		default:
			key.g = r.KeyMeta[strings.TrimPrefix(q.GroupBy, "meta.")]
		}
		u := rows[key]
		if u == nil {
			u = &UsageRow{Bucket: key.b, Group: key.g}
			rows[key] = u
		}
		if q.GroupBy == "key" && r.KeyName > u.KeyName {
			u.KeyName = r.KeyName
		}
		u.Requests++
		if r.Kind != "" && r.Kind != "canceled" {
			u.Errors++
		}
		u.TokensIn += int64(r.TokensIn)
		u.TokensOut += int64(r.TokensOut)
		u.CostUSD += r.CostUSD
		u.CacheReadTokens += int64(r.CacheReadTokens)
		u.CacheWriteTokens += int64(r.CacheWriteTokens)
		u.SavedUSD += r.SavedUSD
		if r.Cache == "hit" {
			u.CacheHits++
		}
		u.FirstToken.Add(r.FirstTokenMS)
	}
	var out []UsageRow
	for _, u := range rows {
		u.P95FirstTokenMS = u.FirstToken.Quantile(0.95)
		out = append(out, *u)
	}
	slices.SortFunc(out, func(a, b UsageRow) int {
		if c := a.Bucket.Compare(b.Bucket); c != 0 {
			return c
		}
		return strings.Compare(a.Group, b.Group)
	})
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func testUsage(t *testing.T, open openFunc) {
	st := open(t, 0)
	ctx := context.Background()
	base := time.Date(2026, 5, 20, 22, 3, 0, 0, time.UTC)
	var set []Record
	for i := range 60 {
		r := rec(i, base.Add(time.Duration(i)*7*time.Minute)) // 7 hours, across midnight
		r.FirstTokenMS = float64((i * 37) % 500)              // some 0: no first token
		if i%10 == 9 {
			r.KeyMeta = nil // no team: the group ""
		}
		set = append(set, r)
	}
	if err := st.Write(ctx, set); err != nil {
		t.Fatal(err)
	}
	from, to := base.Add(-time.Hour), base.Add(8*time.Hour)
	for _, q := range []UsageQuery{
		{From: from, To: to},
		{From: from, To: to, Bucket: Hour, GroupBy: "meta.team"},
		{From: from, To: to, Bucket: Day, GroupBy: "meta.team"},
		{From: from, To: to, Bucket: Day, GroupBy: "key"},
		{From: from, To: to, Bucket: Hour, GroupBy: "alias"},
		{From: from, To: to, GroupBy: "target", Key: "key_a"},
		{From: from, To: to, Bucket: Day, GroupBy: "team"},
		{From: base.Add(time.Hour), To: base.Add(3 * time.Hour), Bucket: Hour, GroupBy: "meta.missing"},
		// One team, and a caller's scope (issue 37): the sums hold no record outside them.
		{From: from, To: to, Bucket: Day, GroupBy: "key", Team: "search"},
		{From: from, To: to, GroupBy: "team", Scope: &Scope{Teams: []string{"infra"}, Keys: []string{"key_a"}}},
		{From: from, To: to, Bucket: Hour, GroupBy: "key", Team: "search", Scope: &Scope{Teams: []string{"infra"}}},
		{From: from, To: to, GroupBy: "team", Scope: &Scope{}},
	} {
		t.Run(fmt.Sprintf("%s-%s-%s-%s-%v", q.Bucket, q.GroupBy, q.Key, q.Team, q.Scope), func(t *testing.T) {
			got, err := st.Usage(ctx, q)
			if err != nil {
				t.Fatalf("Usage: %v", err)
			}
			want := usageWant(set, q)
			if len(got) != len(want) {
				t.Fatalf("got %d rows %+v, want %d %+v", len(got), got, len(want), want)
			}
			for i := range got {
				g, w := got[i], want[i]
				if !g.Bucket.Equal(w.Bucket) || g.Group != w.Group || g.KeyName != w.KeyName || g.Requests != w.Requests ||
					g.Errors != w.Errors || g.TokensIn != w.TokensIn || g.TokensOut != w.TokensOut ||
					!near(g.CostUSD, w.CostUSD) || !near(g.P95FirstTokenMS, w.P95FirstTokenMS) ||
					g.CacheReadTokens != w.CacheReadTokens || g.CacheWriteTokens != w.CacheWriteTokens || !near(g.SavedUSD, w.SavedUSD) ||
					g.CacheHits != w.CacheHits || g.FirstToken != w.FirstToken {
					t.Errorf("row %d: got %+v, want %+v", i, g, w)
				}
			}
		})
	}
	for _, q := range []UsageQuery{
		{From: to, To: from},
		{From: from, To: to, Bucket: "week"},
		{From: from, To: to, GroupBy: "model"},
		{From: from, To: to, GroupBy: "meta.a'b"},
	} {
		var e *llm.Error
		if _, err := st.Usage(ctx, q); !errors.As(err, &e) || e.Kind != llm.Invalid || e.Param == "" {
			t.Errorf("Usage(%+v): got %v, want an Invalid *llm.Error naming the field", q, err)
		}
	}
}
