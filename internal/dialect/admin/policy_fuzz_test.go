package admin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/logstore"
	"github.com/sluice-gw/sluice/internal/usage"
)

// foreign is everything of a team the callers of FuzzOtherTeam are not in, named from a
// seed: the team, its user with a personal token, the user's key, and a record and usage
// of the key's request.
type foreign struct {
	Team, User, Email, Name, Token, TokenSecret, Key, KeyName, KeySecret, Record string
}

// foreignOf names f from seed: a prefix of each kind and 20 hex digits of the seed's hash,
// so that no name is a part of another's or of the fixtures' (and a team name is valid).
func foreignOf(seed string) foreign {
	h := sha256.Sum256([]byte(seed))
	x := hex.EncodeToString(h[:])
	return foreign{Team: "t" + x[:20], User: "usr_" + x[1:21], Email: x[2:22] + "@b.example", Name: "n" + x[3:23],
		Token: "tok_" + x[4:24], TokenSecret: auth.UserPrefix + x[5:45], Key: "key_" + x[6:26], KeyName: "k" + x[7:27],
		KeySecret: "sk-sluice-" + x[8:48], Record: "req_" + x[9:29]}
}

// names are f's strings as a probe's template names them.
func (f foreign) names() map[string]string {
	return map[string]string{"{team}": f.Team, "{user}": f.User, "{token}": f.Token, "{key}": f.Key, "{record}": f.Record}
}

// secrets are what no answer to a caller outside f's team may hold.
func (f foreign) secrets() []string {
	return []string{f.Team, f.User, f.Email, f.Name, f.Token, f.TokenSecret, auth.Hash(f.TokenSecret), f.Key, f.KeyName,
		f.KeySecret, auth.Hash(f.KeySecret), f.Record}
}

// create puts f in a's stores.
func (f foreign) create(t *testing.T, a API) {
	t.Helper()
	ctx, now := context.Background(), time.Now().UTC()
	if err := a.Teams.Store.Create(ctx, &auth.Team{Name: f.Team, Models: []string{"*"}, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := a.Users.CreateUser(ctx, &auth.User{ID: f.User, Email: f.Email, Name: f.Name, Role: auth.RoleMember, Teams: []string{f.Team},
		Source: auth.SourceAPI, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	tok := &auth.UserToken{ID: f.Token, User: f.User, Name: f.Name, Hash: auth.Hash(f.TokenSecret), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := a.Users.CreateToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	k := &auth.Key{ID: f.Key, Name: f.KeyName, Hash: auth.Hash(f.KeySecret), Models: []string{"*"}, Team: f.Team, Owner: f.User, CreatedAt: now}
	if err := a.Keys.Store.Create(ctx, k); err != nil {
		t.Fatal(err)
	}
	if err := a.Logs.Write(ctx, []logstore.Record{{ID: f.Record, Time: now.Add(-time.Minute), KeyID: f.Key, KeyName: f.KeyName, Team: f.Team,
		Wire: "chat", Method: "POST", Path: "/v1/chat/completions", Alias: "default", Status: 200}}); err != nil {
		t.Fatal(err)
	}
	day := now.Format(usage.DayLayout)
	for _, l := range []usage.Labels{{Key: f.Key, Team: f.Team, Alias: "default"}, {Key: "key_search", Team: "search", Alias: "default"}} {
		if err := a.Usage.Add(ctx, day, l, usage.Counts{Requests: 1, InputTokens: 3}); err != nil {
			t.Fatal(err)
		}
	}
}

// probe is one way of naming another team's resource in a call of a route: in the path's
// ids, the query or the body, as templates of foreign.names.
type probe struct {
	id, sub, query, body string
}

// byID reports whether the probe names the resource in the path: the route reads it by id,
// and must refuse it.
func (p probe) byID() bool { return strings.Contains(p.id+p.sub, "{") }

// probesOf are the probes of a route, from its path: whoever adds a route whose resource
// this does not know gets a failing test, not a route left out.
func probesOf(t *testing.T, r Route) []probe {
	kind := strings.Split(strings.TrimPrefix(r.Path, "/admin/"), "/")[0]
	var ps []probe
	switch {
	case strings.HasSuffix(r.Path, "/:token"):
		ps = append(ps, probe{id: "{user}", sub: "{token}"})
	case strings.HasSuffix(r.Path, "/members"):
		ps = append(ps, probe{id: "{team}", body: `{"add":["usr_m"]}`}, probe{id: "search", body: `{"add":["{user}"]}`},
			probe{id: "search", body: `{"remove":["{user}"]}`})
	case strings.Contains(r.Path, "/:id"):
		id := map[string]string{"keys": "{key}", "users": "{user}", "teams": "{team}", "logs": "{record}"}[kind]
		if id == "" {
			t.Fatalf("%s %s: which resource does its id name? add it to probesOf", r.Method, r.Path)
		}
		ps = append(ps, probe{id: id, body: `{"name":"x"}`})
	}
	// What a change names of the other team in its body: its team, its user; on the caller's
	// own team, key or user (PATCH), or creating (POST). A read, in its query.
	own := map[string]string{"keys": "key_search", "users": "usr_ta", "teams": "search"}[kind]
	switch body := map[string]string{"keys": `{"name":"x","team":"{team}"}`, "users": `{"email":"x@a.example","teams":["{team}"]}`,
		"teams": `{"name":"{team}","models":["*"]}`}[kind]; {
	case r.Method == http.MethodPost && body != "" && !strings.Contains(r.Path, "/:id"):
		ps = append(ps, probe{body: body})
	case r.Method == http.MethodPatch && own != "" && !strings.HasSuffix(r.Path, "/members"):
		ps = append(ps, probe{id: own, body: body})
	}
	switch kind {
	case "keys", "users", "teams":
	case "logs", "usage":
		ps = append(ps, probe{query: "key={key}"}, probe{query: "team={team}"}, probe{query: "key={key}&format=csv"})
	case "audit":
		ps = append(ps, probe{query: "resource_id={key}"}, probe{query: "user={user}"})
	case "cache", "stats", "health":
		ps = append(ps, probe{query: "alias={team}"})
	case "version": // the build (admin only): nothing of any team
	default:
		t.Fatalf("%s %s: what does it read of a team? add it to probesOf", r.Method, r.Path)
	}
	return append(ps, probe{}) // the bare route: its lists hold no other team's
}

// answer is what a caller learns from an answer: its status and every byte of its body or
// error (a download's file), with each name of fills taken out (the caller named it).
func answer(t *testing.T, code int, v any, err error, fills ...map[string]string) string {
	t.Helper()
	var b []byte
	switch d := v.(type) {
	case Download:
		var buf bytes.Buffer
		if err := d.Write(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
		b = buf.Bytes()
	case Events: // a live tail, from now on: it queries the same scoped store as the list (scopedLogs)
		b = []byte("events")
	default:
		b, _ = json.Marshal(v)
	}
	out := fmt.Sprintf("%d %s", code, b)
	if err != nil {
		eb, _ := json.Marshal(err)
		out = fmt.Sprintf("%d %s %s", status(err), err.Error(), eb)
	}
	for _, fill := range fills {
		for name, s := range fill {
			out = strings.ReplaceAll(out, s, name)
		}
	}
	return out
}

func (p probe) input(fill map[string]string) Input {
	r := strings.NewReplacer(func() []string {
		var kv []string
		for k, v := range fill {
			kv = append(kv, k, v)
		}
		return kv
	}()...)
	q, _ := url.ParseQuery(r.Replace(p.query))
	in := Input{ID: r.Replace(p.id), Sub: r.Replace(p.sub), Query: q}
	if p.body != "" {
		in.Body = []byte(r.Replace(p.body))
	}
	return in
}

// FuzzOtherTeam: for every route of the admin API (API.Routes, walked, not listed) and
// every role but admin, a resource of another team, named by a fuzzed seed in the path, the
// query or the body, is refused where the route reads it by id, and the answer is the one
// an unknown name gets (byte for byte, the name taken out): no existence oracle. No answer
// holds another team's names, ids or secrets, and nothing of the other team changes. The
// admin reads the same ids (the fixtures exist: the property is not vacuous).
func FuzzOtherTeam(f *testing.F) {
	for _, s := range []string{"ads", "", "usr_ta", "search", "\x00/..%2f", "key_search"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed string) {
		a, ops := policyAPI(t)
		call := ops["call"]
		other, unknown := foreignOf("other:"+seed), foreignOf("unknown:"+seed)
		other.create(t, a)
		roles := []*auth.Principal{
			searchAdmin, searchViewer,
			{User: "usr_m", Role: auth.RoleMember, Teams: []string{"search"}},
			{User: "usr_lone", Role: auth.RoleTeamAdmin}, // in no team
		}
		walked := 0
		for _, r := range a.Routes() {
			for _, pr := range probesOf(t, r) {
				walked++
				for _, p := range roles {
					st, v, err := call(r.Method, r.Path, req{p, pr.input(other.names())})
					got := answer(t, st, v, err, other.names())
					for _, s := range other.secrets() {
						if strings.Contains(got, s) {
							t.Errorf("%s %s %+v as %s: the answer holds %q of another team: %s", r.Method, r.Path, pr, p.Role, s, got)
						}
					}
					if pr.byID() && err == nil {
						t.Errorf("%s %s %+v as %s: another team's resource answered %s, want a refusal", r.Method, r.Path, pr, p.Role, got)
					}
					if pr.id == "" && pr.query == "" && pr.body == "" {
						continue
					}
					st, v, err = call(r.Method, r.Path, req{p, pr.input(unknown.names())})
					if want := answer(t, st, v, err, unknown.names()); got != want {
						t.Errorf("%s %s %+v as %s: another team's answer\n  %s\nan unknown one's\n  %s\nwant the same", r.Method, r.Path, pr, p.Role, got, want)
					}
				}
			}
		}
		if walked < 40 {
			t.Fatalf("walked %d probes, want every route's", walked)
		}
		other.unchanged(t, a)
		// The admin sees what the others were refused.
		for _, c := range []struct{ path, id string }{
			{"/admin/keys/:id", other.Key}, {"/admin/users/:id", other.User}, {"/admin/teams/:id", other.Team}, {"/admin/logs/:id", other.Record},
		} {
			if _, _, err := call("GET", c.path, req{auth.Bootstrap, Input{ID: c.id}}); err != nil {
				t.Errorf("admin GET %s %s: %v", c.path, c.id, err)
			}
		}
	})
}

// unchanged checks that f is in a's stores as create put it.
func (f foreign) unchanged(t *testing.T, a API) {
	t.Helper()
	ctx := context.Background()
	if u, err := a.Users.User(ctx, f.User); err != nil || !slices.Equal(u.Teams, []string{f.Team}) || u.Role != auth.RoleMember {
		t.Errorf("the other team's user: got %+v, %v", u, err)
	}
	if k, err := a.Keys.Store.Get(ctx, f.Key); err != nil || k.Team != f.Team || k.Name != f.KeyName {
		t.Errorf("the other team's key: got %+v, %v", k, err)
	}
	if _, err := a.Teams.Store.Get(ctx, f.Team); err != nil {
		t.Errorf("the other team: %v", err)
	}
	if ts, err := a.Users.Tokens(ctx, f.User); err != nil || len(ts) != 1 {
		t.Errorf("the other team's user's tokens: got %v, %v", ts, err)
	}
}
