package server_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/redisstore/redistest"
)

// Two keys of one team, rpm 30 on the team, 60 concurrent requests over two replicas
// sharing a real Redis: exactly 30 pass, and the refusals name the team (issue 37). The
// team, made through the admin API, lists its keys and cannot be deleted while it has them.
func TestFleetTeamLimit(t *testing.T) {
	srv := redistest.Start(t)
	var log logBuffer
	gw := fleet(t, srv, "", "closed", "", &log)
	if r := do(t, "POST", gw[0]+"/admin/teams", admin, `{"name":"search","rpm":30}`); r.status != 201 {
		t.Fatalf("POST /admin/teams: got %d %s, want 201", r.status, r.body)
	}
	if r := do(t, "POST", gw[1]+"/admin/keys", admin, `{"name":"stray","team":"serch"}`); r.status != 400 ||
		!strings.Contains(string(r.body), "team names 'serch', which is not a team") {
		t.Errorf("a key of a team that does not exist: got %d %s, want 400", r.status, r.body)
	}
	idA, a := createKey(t, gw[1], admin, `{"name":"bot-a","team":"search"}`)
	idB, b := createKey(t, gw[0], admin, `{"name":"bot-b","team":"search"}`)
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Go(func() {
			secret := []string{a, b}[i/2%2]
			r := do(t, "POST", gw[i%2]+"/v1/chat/completions", secret, chatBody("default", i%3 == 0, ""))
			if r.status == 429 && (r.errCode() != "rate_limit_exceeded" ||
				!strings.Contains(string(r.body), "Rate limit reached for team 'search' on requests per minute") &&
					!strings.Contains(string(r.body), "Rate limit reached for team 'search' on requests per 1h0m0s")) {
				t.Errorf("got a 429 %s, want the team's rate limit named", r.body)
			}
			mu.Lock()
			statuses[r.status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if statuses[200] != 30 || statuses[429] != 30 || len(statuses) != 2 {
		t.Errorf("got statuses %v, want exactly 30 × 200 and 30 × 429", statuses)
	}
	r := do(t, "GET", gw[1]+"/admin/teams/search", admin, "")
	var team struct {
		ID, Source string
		RPM        int64
		Keys       []struct{ ID, Name string }
	}
	if err := json.Unmarshal(r.body, &team); err != nil || r.status != 200 || team.ID != "search" || team.RPM != 30 ||
		team.Source != "api" || len(team.Keys) != 2 {
		t.Fatalf("GET /admin/teams/search: got %d %s, want the team and its two keys", r.status, r.body)
	}
	if strings.Contains(string(r.body), "hash") {
		t.Errorf("GET /admin/teams/search: got %s, want no key hash", r.body)
	}
	if r := do(t, "DELETE", gw[0]+"/admin/teams/search", admin, ""); r.status != 409 || r.errCode() != "team_in_use" {
		t.Errorf("DELETE a team with keys: got %d %s, want 409 team_in_use", r.status, r.body)
	}
	for _, id := range []string{idA, idB} {
		if r := do(t, "PATCH", gw[0]+"/admin/keys/"+id, admin, `{"team":null}`); r.status != 200 || strings.Contains(string(r.body), `"team":"`) {
			t.Fatalf("PATCH team null: got %d %s, want the key out of the team", r.status, r.body)
		}
	}
	if r := do(t, "DELETE", gw[1]+"/admin/teams/search", admin, ""); r.status != 200 {
		t.Errorf("DELETE a team without keys: got %d %s, want 200", r.status, r.body)
	}
	if r := do(t, "GET", gw[0]+"/admin/teams/search", admin, ""); r.status != 404 {
		t.Errorf("GET a deleted team: got %d %s, want 404", r.status, r.body)
	}
	noSecret(t, srv, &log, a)
}

// A team's budget is held the same way: two keys of a team whose day allows about 10
// requests, 50 concurrent requests over two replicas: the team's budget stops them,
// overspending by at most one reservation, and the account and the counters in Redis
// hold every request's real cost, grouped by team.
func TestFleetTeamBudget(t *testing.T) {
	srv := redistest.Start(t)
	a, b := auth.NewSecret(), auth.NewSecret()
	yaml := budgetConfig + `teams: [{name: search, models: [default], budget: {daily_usd: 62, monthly_usd: 1000}}]
keys:
  - {name: bot-a, hash: ` + auth.Hash(a) + `, team: search}
  - {name: bot-b, hash: ` + auth.Hash(b) + `, team: search, budget: {daily_usd: 1000}}
redis: {url: "${REDIS_URL}", timeout: 5s, on_failure: closed}
`
	vars := map[string]string{"REDIS_URL": srv.URL}
	gw := [2]string{serveGate(t, yaml, vars, time.Hour, nil), serveGate(t, yaml, vars, time.Hour, nil)}
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			secret := []string{a, b}[i/2%2]
			r := do(t, "POST", gw[i%2]+"/v1/chat/completions", secret, chatBody("default", i%2 == 0, `,"max_tokens":6`))
			if r.status == 429 && (r.errCode() != "budget_exceeded" || r.header.Get("X-Should-Retry") != "false" ||
				!strings.Contains(string(r.body), "Team 'search' has used its budget of $62.00 for this day (UTC)")) {
				t.Errorf("got a 429 %s, want the team's budget_exceeded", r.body)
			}
			mu.Lock()
			statuses[r.status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	// Admitted while something is left: 10 × 6 = 60 < 62 lets an 11th through.
	if statuses[200] != 11 || statuses[429] != 39 {
		t.Errorf("got statuses %v, want 11 × 200 and 39 × 429", statuses)
	}
	if r := do(t, "POST", gw[0]+"/v1/chat/completions", b, chatBody("fast", false, "")); r.status != 403 ||
		!strings.Contains(string(r.body), "team 'search' of this API key is not allowed to use the model 'fast'") {
		t.Errorf("a model outside the team's: got %d %s, want 403", r.status, r.body)
	}
	lines, total := usageReport(t, gw[1], "group_by=team")
	if total.CostUSD != 11*perRequest || len(lines) != 1 {
		t.Errorf("got %+v, %+v, want one team line of 66 USD", lines, total)
	}
	r := do(t, "GET", gw[1]+"/admin/usage?group_by=team", admin, "")
	if !strings.Contains(string(r.body), `"team":"search"`) {
		t.Errorf("got %s, want a line of the team search", r.body)
	}
	day := time.Now().UTC().Format("2006-01-02")
	want := "sluice:{budget:team:search}:day:" + day + " = 66000000000"
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		dump := strings.Join(srv.Dump(t), "\n")
		if strings.Contains(dump, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("got Redis:\n%s\nwant %q: every reservation settled to its cost", dump, want)
		}
	}
	if r := do(t, "PATCH", gw[0]+"/admin/teams/search", admin, `{"rpm":5}`); r.status != 409 || r.errCode() != "team_in_config" {
		t.Errorf("PATCH a config team: got %d %s, want 409 team_in_config", r.status, r.body)
	}
}
