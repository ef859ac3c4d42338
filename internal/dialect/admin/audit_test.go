package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/logstore"
)

// call finds the route method path of rs and calls it as the edge does.
func call(t *testing.T, rs []Route, ctx context.Context, method, path string, in Input) (int, any, error) {
	t.Helper()
	for _, rt := range rs {
		if rt.Method == method && rt.Path == path {
			return rt.Op(ctx, in)
		}
	}
	t.Fatalf("no route %s %s", method, path)
	return 0, nil, nil
}

func entries(t *testing.T, st AuditStore) []logstore.AuditEntry {
	t.Helper()
	p, err := st.QueryAudit(context.Background(), logstore.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return p.Entries
}

// Every change through the key routes is recorded with who, what and the key before and
// after; a failed change is not; the created key's secret is in no entry.
func TestAuditKeys(t *testing.T) {
	mem := logstore.NewAuditMemory(0)
	teams := auth.NewTeams([]*auth.Team{{Name: "search"}}, &auth.TeamMemory{})
	a := API{Keys: Keys{Store: auth.NewKeys(nil, &auth.Memory{}), Teams: teams}, Audit: mem}
	rs := a.Routes()
	ctx := auth.WithPrincipal(context.Background(), &auth.Principal{User: "alice", Role: auth.RoleMember, Teams: []string{"search"}})

	st, v, err := call(t, rs, ctx, "POST", "/admin/keys", Input{Body: []byte(`{"name":"bot","team":"search","rpm":10,"metadata":{"note":"sk-planted-in-metadata"}}`)})
	if err != nil || st != 201 {
		t.Fatalf("create: %d %v", st, err)
	}
	created := v.(Key)
	if !strings.HasPrefix(created.Secret, "sk-") {
		t.Fatalf("created key's secret %q: the test below would prove nothing", created.Secret)
	}
	if _, _, err := call(t, rs, ctx, "PATCH", "/admin/keys/:id", Input{ID: created.ID, Body: []byte(`{"rpm":20,"budget":{"daily_usd":5}}`)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := call(t, rs, ctx, "PATCH", "/admin/keys/:id", Input{ID: created.ID, Body: []byte(`{"rpm":-1}`)}); err == nil {
		t.Fatal("a bad patch was taken")
	}
	if _, _, err := call(t, rs, ctx, "PATCH", "/admin/keys/:id", Input{ID: "missing", Body: []byte(`{"rpm":1}`)}); err == nil {
		t.Fatal("a patch of no key was taken")
	}
	if _, _, err := call(t, rs, ctx, "DELETE", "/admin/keys/:id", Input{ID: created.ID}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := call(t, rs, ctx, "DELETE", "/admin/cache", Input{}); err == nil { // admin only: refused, not recorded
		t.Fatal("a member cleared the cache")
	}
	admin := auth.WithPrincipal(context.Background(), auth.Bootstrap)
	if _, _, err := call(t, rs, admin, "DELETE", "/admin/cache", Input{Query: url.Values{"alias": {"default"}}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := call(t, rs, ctx, "GET", "/admin/keys", Input{}); err != nil { // a read: not recorded
		t.Fatal(err)
	}

	es := entries(t, mem)
	if len(es) != 4 {
		t.Fatalf("got %d entries, want 4 (create, patch, delete, cache clear): %+v", len(es), es)
	}
	byAction := map[string]logstore.AuditEntry{}
	for _, e := range es {
		who, role := "alice", "member"
		if e.ResourceKind == "cache" {
			who, role = "admin", "admin"
		}
		if e.User != who || e.Role != role || e.ID == "" || e.Time.IsZero() {
			t.Errorf("entry %+v: want %s, %s, an id and a time", e, who, role)
		}
		byAction[e.Action] = e
	}
	type key struct {
		ID     string         `json:"id"`
		RPM    int            `json:"rpm"`
		Secret *string        `json:"key"`
		Budget map[string]any `json:"budget"`
	}
	val := func(raw json.RawMessage) *key {
		var k *key
		if err := json.Unmarshal(raw, &k); err != nil {
			t.Fatal(err)
		}
		return k
	}
	c := byAction["POST /admin/keys"]
	if k := val(c.After); c.ResourceKind != "key" || c.ResourceID != created.ID || string(c.Before) != "null" ||
		k == nil || k.RPM != 10 || k.Secret == nil || *k.Secret != Redacted || c.Status != 201 {
		t.Errorf("create: %+v (after %s)", c, c.After)
	}
	p := byAction["PATCH /admin/keys/{id}"]
	if b, af := val(p.Before), val(p.After); p.ResourceID != created.ID || b == nil || af == nil || b.RPM != 10 || af.RPM != 20 ||
		af.Budget["daily_usd"] != 5.0 {
		t.Errorf("patch: %+v before %s after %s", p, p.Before, p.After)
	}
	d := byAction["DELETE /admin/keys/{id}"]
	if b := val(d.Before); d.ResourceID != created.ID || b == nil || b.ID != created.ID || string(d.After) != "null" {
		t.Errorf("delete: %+v before %s after %s", d, d.Before, d.After)
	}
	cc := byAction["DELETE /admin/cache"]
	if cc.ResourceKind != "cache" || cc.ResourceID != "" || !bytes.Contains(cc.After, []byte(`"alias":"default"`)) {
		t.Errorf("cache clear: %+v after %s", cc, cc.After)
	}
	all, _ := json.Marshal(es)
	if bytes.Contains(all, []byte(created.Secret)) || bytes.Contains(all, []byte("sk-planted")) {
		t.Errorf("the audit log holds a secret: %s", all)
	}
}

// A route added later is audited too, and a store that fails leaves the change standing.
func TestAuditGenericRoute(t *testing.T) {
	rs := []Route{
		{http.MethodGet, "/admin/teams/:id", func(_ context.Context, in Input) (int, any, error) {
			return 200, map[string]any{"id": in.ID, "rpm": 1}, nil
		}},
		{http.MethodPut, "/admin/teams/:id", func(_ context.Context, in Input) (int, any, error) {
			return 200, map[string]any{"id": in.ID, "rpm": 2}, nil
		}},
		{http.MethodPost, "/admin/users/:id/tokens", func(_ context.Context, in Input) (int, any, error) {
			return 201, map[string]any{"id": "tok_1", "user": in.ID, "token": "plain-token-value", "expires_at": nil}, nil
		}},
	}
	mem := logstore.NewAuditMemory(0)
	rs = API{Audit: mem}.audited(rs)
	ctx := auth.WithPrincipal(context.Background(), auth.Bootstrap)
	call(t, rs, ctx, "PUT", "/admin/teams/:id", Input{ID: "search"})
	call(t, rs, ctx, "POST", "/admin/users/:id/tokens", Input{ID: "u1"})
	es := entries(t, mem)
	if len(es) != 2 {
		t.Fatalf("got %+v, want 2 entries", es)
	}
	tok, team := es[0], es[1]
	if team.Action != "PUT /admin/teams/{id}" || team.ResourceKind != "team" || team.ResourceID != "search" ||
		string(team.Before) != `{"id":"search","rpm":1}` || string(team.After) != `{"id":"search","rpm":2}` || team.User != "admin" {
		t.Errorf("team: %+v %s %s", team, team.Before, team.After)
	}
	if tok.Action != "POST /admin/users/{id}/tokens" || tok.ResourceKind != "token" || tok.ResourceID != "tok_1" ||
		bytes.Contains(tok.After, []byte("plain-token-value")) {
		t.Errorf("token: %+v %s", tok, tok.After)
	}

	failing := API{Audit: failStore{}}.audited(rs[:2])
	if st, v, err := call(t, failing, ctx, "PUT", "/admin/teams/:id", Input{ID: "x"}); err != nil || st != 200 || v == nil {
		t.Errorf("with the audit store down: %d %v %v, want the change's answer", st, v, err)
	}
}

type failStore struct{}

func (failStore) WriteAudit(context.Context, logstore.AuditEntry) error {
	return errors.New("disk full")
}
func (failStore) QueryAudit(context.Context, logstore.AuditFilter) (logstore.AuditPage, error) {
	return logstore.AuditPage{}, errors.New("disk full")
}

func TestStrip(t *testing.T) {
	in := map[string]any{
		"name": "bot", "Key": "abc", "TOKEN": "t", "hash": "h", "password": "p", "client_secret": "c",
		"api_key": "k", "Authorization": "Bearer x", "access_token": "a", "key_id": "kid", "tokens_in": 5,
		"nested":       []any{map[string]any{"secret": map[string]any{"x": 1}, "ok": "sk-live-123", "n": uint64(12345678901234567890)}},
		"empty_secret": nil,
	}
	var got map[string]any
	if err := json.Unmarshal(Strip(in), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"Key", "TOKEN", "hash", "password", "client_secret", "api_key", "Authorization", "access_token"} {
		if got[k] != Redacted {
			t.Errorf("%s: %v, want it redacted", k, got[k])
		}
	}
	n := got["nested"].([]any)[0].(map[string]any)
	if got["name"] != "bot" || got["key_id"] != "kid" || got["tokens_in"] != 5.0 || n["secret"] != Redacted || n["ok"] != Redacted ||
		got["empty_secret"] != nil {
		t.Errorf("got %v", got)
	}
	if !bytes.Contains(Strip(in), []byte("12345678901234567890")) {
		t.Error("a big number lost its digits")
	}
	if string(Strip(nil)) != "null" {
		t.Error("nil is not null")
	}
}

// GET /admin/audit pages through the log and refuses a bad filter with a 400 naming it.
func TestAuditList(t *testing.T) {
	mem := logstore.NewAuditMemory(0)
	a := API{Audit: mem}
	rs := a.audited([]Route{{http.MethodDelete, "/admin/cache", a.clear}, {http.MethodGet, "/admin/audit", a.auditList}})
	for range 3 {
		call(t, rs, context.Background(), "DELETE", "/admin/cache", Input{})
	}
	seen := map[string]bool{}
	q := url.Values{"limit": {"2"}, "resource_kind": {"cache"}}
	for pages := 0; pages < 3; pages++ {
		st, v, err := call(t, rs, context.Background(), "GET", "/admin/audit", Input{Query: q})
		if err != nil || st != 200 {
			t.Fatal(st, err)
		}
		b, _ := json.Marshal(v)
		var page struct {
			Store string `json:"store"`
			Data  []struct {
				ID string `json:"id"`
			} `json:"data"`
			Next *string `json:"next_cursor"`
		}
		_ = json.Unmarshal(b, &page)
		if page.Store != "memory" {
			t.Errorf("store %q, want memory", page.Store)
		}
		for _, e := range page.Data {
			seen[e.ID] = true
		}
		if page.Next == nil {
			break
		}
		q.Set("cursor", *page.Next)
	}
	if len(seen) != 3 {
		t.Errorf("paged through %d entries, want 3", len(seen))
	}
	_, _, err := call(t, rs, context.Background(), "GET", "/admin/audit", Input{Query: url.Values{"who": {"x"}}})
	var le *llm.Error
	if !errors.As(err, &le) || le.Param != "who" || llm.HTTPStatus(err) != 400 {
		t.Errorf("unknown filter: %v, want a 400 naming it", err)
	}
}
