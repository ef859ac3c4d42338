package admin

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/usage"
)

// GET /admin/usage without key= answers each role the sums of what it may read, from the
// account and from the request log alike: admin every key; team_admin and viewer their
// team's; a member their own keys'. key= and team= narrow it; one the caller does not see is
// a 404, the same answer as one that does not exist (no existence leak).
func TestUsageScope(t *testing.T) {
	a, ops := policyAPI(t)
	call := ops["call"]
	ctx := context.Background()
	now := time.Now().UTC()
	member := memberKey(t, a, now.Add(-time.Minute)) // their own key, teamless, beside key_search and key_ads
	// The account: as many requests as the log holds of each key (one), and more of ads',
	// so a total that took another team's rows would show.
	for _, r := range []struct {
		key, team string
		n         int64
	}{{"key_search", "search", 1}, {"key_ads", "ads", 7}, {"key_mine", "", 1}} {
		if err := a.Usage.Add(ctx, now.Format(usage.DayLayout), usage.Labels{Key: r.key, Alias: "default", Target: "sim/echo", Team: r.team},
			usage.Counts{Requests: r.n}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		who    *auth.Principal
		query  url.Values
		groups []string // the lines' keys; nil with status 404
		status int
	}{
		{"admin, every key", auth.Bootstrap, nil, []string{"key_ads", "key_mine", "key_search"}, 200},
		{"admin, one team", auth.Bootstrap, url.Values{"team": {"ads"}}, []string{"key_ads"}, 200},
		{"team_admin, their team's", searchAdmin, nil, []string{"key_search"}, 200},
		{"team_admin, their team named", searchAdmin, url.Values{"team": {"search"}}, []string{"key_search"}, 200},
		{"team_admin, their team's key", searchAdmin, url.Values{"key": {"key_search"}}, []string{"key_search"}, 200},
		{"team_admin, another team", searchAdmin, url.Values{"team": {"ads"}}, nil, 404},
		{"team_admin, no such team", searchAdmin, url.Values{"team": {"nope"}}, nil, 404},
		{"team_admin, another team's key", searchAdmin, url.Values{"key": {"key_ads"}}, nil, 404},
		{"viewer, their team's", searchViewer, nil, []string{"key_search"}, 200},
		{"viewer, another team", searchViewer, url.Values{"team": {"ads"}}, nil, 404},
		{"viewer, a member's key", searchViewer, url.Values{"key": {"key_mine"}}, nil, 404},
		{"member, their own keys", member, nil, []string{"key_mine"}, 200},
		{"member, their team: their keys in it", member, url.Values{"team": {"search"}}, []string{}, 200},
		{"member, their team's key", member, url.Values{"key": {"key_search"}}, nil, 404},
		{"member, another team", member, url.Values{"team": {"ads"}}, nil, 404},
	}
	// Each case on both paths: the account (group_by=key) and the request log (bucket=day).
	for _, path := range []struct {
		name  string
		extra url.Values
	}{{"account", url.Values{"group_by": {"key"}}}, {"logs", url.Values{"group_by": {"key"}, "bucket": {"day"}}}} {
		var notFound []byte // every 404 the same, whether the team or key exists or not
		for _, tc := range tests {
			t.Run(path.name+"/"+tc.name, func(t *testing.T) {
				q := cloneValues(tc.query)
				for k, v := range path.extra {
					q[k] = v
				}
				_, v, err := call("GET", "/admin/usage", req{tc.who, Input{Query: q}})
				if got := status(err); err != nil && got != tc.status || err == nil && tc.status != 200 {
					t.Fatalf("got %v (%d), want %d", err, got, tc.status)
				}
				if tc.status != 200 {
					b, _ := json.Marshal(map[string]any{"code": status(err), "msg": err.Error()})
					if q.Has("team") && notFound == nil {
						notFound = b
					} else if q.Has("team") && string(b) != string(notFound) {
						t.Errorf("got %s, want the same 404 as %s", b, notFound)
					}
					return
				}
				groups, total := usageGroups(t, v)
				if !slices.Equal(groups, tc.groups) {
					t.Errorf("got lines %v, want %v", groups, tc.groups)
				}
				if want := accountRequests(tc.groups); total >= 0 && total != want {
					t.Errorf("got %d requests in all, want %d: the total holds what the lines do not show", total, want)
				}
			})
		}
	}
}

// accountRequests is the fixture account's requests of keys.
func accountRequests(keys []string) int64 {
	n := int64(len(keys))
	if slices.Contains(keys, "key_ads") {
		n += 6
	}
	return n
}

// usageGroups reads an answer of GET /admin/usage, either shape: its lines' keys (sorted)
// and the account's total of requests (-1 for the log's answer, which has none; each of its
// lines, one key's, must hold the one record the fixture logged of it).
func usageGroups(t *testing.T, v any) ([]string, int64) {
	t.Helper()
	b, _ := json.Marshal(v)
	var ans struct {
		Source string `json:"source"`
		Data   []struct {
			Key      string `json:"key"`
			Group    string `json:"group"`
			Requests int64  `json:"requests"`
		} `json:"data"`
		Total struct {
			Requests int64 `json:"requests"`
		} `json:"total"`
	}
	if err := json.Unmarshal(b, &ans); err != nil {
		t.Fatal(err)
	}
	groups := []string{}
	for _, l := range ans.Data {
		groups = append(groups, l.Group) // one shape (issue 50): the group, and the key under its name
		if l.Key != l.Group {
			t.Errorf("line %+v: the key is not the group", l)
		}
		if ans.Source == "logs" && l.Requests != 1 {
			t.Errorf("log line %s: got %d requests, want 1", l.Group, l.Requests)
		}
	}
	slices.Sort(groups)
	if ans.Source == "logs" && ans.Total.Requests != int64(len(groups)) {
		t.Errorf("got %d requests in the log's total, want %d: one a line", ans.Total.Requests, len(groups))
		return groups, -1
	}
	if ans.Source == "logs" {
		return groups, -1
	}
	return groups, ans.Total.Requests
}
