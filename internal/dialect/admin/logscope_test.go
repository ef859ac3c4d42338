package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/logstore"
)

// A team_admin's view of the request log is their team's records, through the store's
// query: over records of two teams interleaved, every page is full, the cursor walks them
// all, and no record of the other team is on any page, whatever the filter asks.
func TestLogScopePages(t *testing.T) {
	a, ops := policyAPI(t)
	call := ops["call"]
	ctx := context.Background()
	now := time.Now().UTC()
	var recs []logstore.Record
	for i := range 40 { // search, ads, search, ads...: a filter after the query would halve each page
		team := []string{"search", "ads"}[i%2]
		recs = append(recs, logstore.Record{ID: fmt.Sprintf("req_%02d", i), Time: now.Add(-time.Duration(i+2) * time.Minute),
			KeyID: "key_" + team, KeyName: team, Team: team, Wire: "chat", Method: "POST", Path: "/v1/chat/completions", Alias: "default", Status: 200})
	}
	if err := a.Logs.Write(ctx, recs); err != nil {
		t.Fatal(err)
	}
	member := memberKey(t, a, now.Add(-90*time.Second)) // a member's own key, teamless: theirs only

	walk := func(p *auth.Principal, q url.Values) (pages [][]string) {
		t.Helper()
		for range 100 {
			_, v, err := call("GET", "/admin/logs", req{p, Input{Query: q}})
			if err != nil {
				t.Fatal(err)
			}
			pages = append(pages, strings.Split(ids(t, v, nil), ","))
			b, _ := json.Marshal(v)
			var page struct {
				Next *string `json:"next_cursor"`
			}
			_ = json.Unmarshal(b, &page)
			if page.Next == nil {
				return pages
			}
			q = cloneValues(q)
			q.Set("cursor", *page.Next)
		}
		t.Fatal("the cursor does not move")
		return nil
	}
	for _, p := range []*auth.Principal{searchAdmin, searchViewer} {
		pages := walk(p, url.Values{"limit": {"4"}})
		var seen []string
		for i, pg := range pages {
			if i < len(pages)-1 && len(pg) != 4 {
				t.Errorf("%s: page %d holds %d records, want 4 (a full page)", p.Role, i, len(pg))
			}
			seen = append(seen, pg...)
		}
		for _, id := range seen {
			if id == "req_ads" || id == "req_mine" || id != "req_search" && id[len(id)-1]%2 == 1 {
				t.Errorf("%s: got %s, a record of another team", p.Role, id)
			}
		}
		if len(seen) != 21 { // 20 of search, and the fixture's req_search
			t.Errorf("%s: got %d records over %d pages, want 21", p.Role, len(seen), len(pages))
		}
		// Asking for the other team's records by filter gives nothing, not a leak.
		if got := walk(p, url.Values{"team": {"ads"}}); len(got) != 1 || got[0][0] != "" {
			t.Errorf("%s asking team=ads: got %v, want nothing", p.Role, got)
		}
	}
	// The member: their own key's records, not their team's.
	if got := walk(member, url.Values{"limit": {"4"}}); len(got) != 1 || !slices.Equal(got[0], []string{"req_mine"}) {
		t.Errorf("member: got %v, want [req_mine]", got)
	}
	// The export takes the same scope.
	_, v, err := call("GET", "/admin/logs/export", req{searchAdmin, Input{Query: url.Values{"limit": {"3"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := v.(Download).Write(ctx, &sb); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(sb.String(), "\n"); n != 21 || strings.Contains(sb.String(), `"team":"ads"`) {
		t.Errorf("the team_admin's export: got %d lines (ads' records: %v), want 21 of search only", n, strings.Contains(sb.String(), `"team":"ads"`))
	}
}

// memberKey adds to the fixture a member of search (usr_m), their own key without a team
// (key_mine) and one request of it logged at at (req_mine), and returns the member.
func memberKey(t *testing.T, a API, at time.Time) *auth.Principal {
	t.Helper()
	ctx := context.Background()
	own := &auth.Key{ID: "key_mine", Name: "mine", Hash: auth.Hash("mine"), Models: []string{"*"}, Owner: "usr_m", CreatedAt: at}
	if err := a.Keys.Store.Create(ctx, own); err != nil {
		t.Fatal(err)
	}
	if err := a.Logs.Write(ctx, []logstore.Record{{ID: "req_mine", Time: at, KeyID: own.ID, KeyName: "mine",
		Wire: "chat", Method: "POST", Path: "/v1/chat/completions", Alias: "default", Status: 200}}); err != nil {
		t.Fatal(err)
	}
	return &auth.Principal{User: "usr_m", Role: auth.RoleMember, Teams: []string{"search"}}
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}
