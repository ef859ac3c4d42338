package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/server"
)

// Every answer of the operator's routes, the admin API's and the console's, says nosniff
// (issue 47; the access middleware sets it, on every route of the server): walked over the
// routes the server registered, with and without the admin token, their errors, unknown
// paths and wrong methods under them, the log's exports and live tail, the console's pages,
// files and redirect.
func TestOperatorNosniff(t *testing.T) {
	url, srv := serveServer(t, logsConfig(t.TempDir()), nil, time.Minute, nil)
	do(t, "POST", url+"/v1/chat/completions", "", chatBody("default", false, ""))
	type call struct{ method, path string }
	calls := []call{
		{"GET", "/admin/logs/export?format=csv"}, {"GET", "/admin/logs/export?format=jsonl"}, {"GET", "/admin/logs?limit=nope"},
		{"GET", "/admin/nothing"}, {"PUT", "/admin/keys"}, {"POST", "/admin/stats"}, {"GET", "/admin"}, {"PUT", "/console/session"},
		{"GET", "/console"}, {"GET", "/console/nothing"}, {"GET", "/console/app.js"}, {"GET", "/console/oidc/none/login"},
	}
	walked := 0
	for _, r := range server.Routes(srv) {
		if r.Path != "/admin" && !strings.HasPrefix(r.Path, "/admin/") && r.Path != "/console" && !strings.HasPrefix(r.Path, "/console/") {
			continue
		}
		walked++
		path := strings.NewReplacer(":id", "x", ":token", "x").Replace(r.Path)
		if strings.HasSuffix(path, "*") {
			path = strings.TrimSuffix(path, "*") + "index.html"
		}
		if strings.HasPrefix(r.Method, "echo_route_not_found") {
			calls = append(calls, call{"GET", path})
			continue
		}
		calls = append(calls, call{r.Method, path})
	}
	if walked < 20 {
		t.Fatalf("walked %d admin and console routes, want them all", walked)
	}
	for _, c := range calls {
		for _, token := range []string{"", logsAdmin} {
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, c.method, url+c.path, strings.NewReader("{}"))
			req.Header.Set("Content-Type", "application/json")
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := client.Do(req) // the headers: a live tail is cut after them
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("%s %s (token %v): %d with X-Content-Type-Options %q, want nosniff", c.method, c.path, token != "", resp.StatusCode, got)
			}
			cancel()
			resp.Body.Close()
		}
	}
}

// Issue 47, finding 1, over HTTP: a team_admin's PATCH /admin/teams/{own}/members naming a
// user of another team answers the very bytes an unknown id gets (the id aside), and the
// user stays in their team alone.
func TestTeamAdminPullsNoForeignUser(t *testing.T) {
	url := serveGate(t, logsConfig(t.TempDir()), nil, time.Minute, nil)
	type made struct{ ID, Token string } // the id, and a personal token's secret
	mk := func(path, body string) (v made) {
		r := do(t, "POST", url+path, logsAdmin, body)
		if err := json.Unmarshal(r.body, &v); r.status != http.StatusCreated || err != nil {
			t.Fatalf("POST %s: %d %s", path, r.status, r.body)
		}
		return v
	}
	mk("/admin/teams", `{"name":"search"}`)
	mk("/admin/teams", `{"name":"ads"}`)
	ta := mk("/admin/users", `{"email":"ta@a.example","role":"team_admin","teams":["search"]}`).ID
	bob := mk("/admin/users", `{"email":"bob@b.example","role":"member","teams":["ads"]}`).ID
	secret := mk("/admin/users/"+ta+"/tokens", `{"name":"t"}`).Token
	patch := func(id string) string {
		r := do(t, "PATCH", url+"/admin/teams/search/members", secret, `{"add":["`+id+`"]}`)
		return fmt.Sprintf("%d %s", r.status, strings.ReplaceAll(string(r.body), id, "ID"))
	}
	unknown := "usr_" + strings.Repeat("0", len(bob)-4)
	if got, want := patch(bob), patch(unknown); got != want || !strings.HasPrefix(got, "404 ") {
		t.Errorf("adding another team's user: got %s, want the unknown id's %s", got, want)
	}
	if r := do(t, "GET", url+"/admin/users/"+bob, logsAdmin, ""); !strings.Contains(string(r.body), `"teams":["ads"]`) {
		t.Errorf("bob after the refusal: %s, want his teams unchanged", r.body)
	}
}
