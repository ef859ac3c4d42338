package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/logstore/pgtest"
)

// auditEntry is what the tests read of an audit entry.
type auditEntry struct {
	User         string          `json:"user"`
	Role         string          `json:"role"`
	Action       string          `json:"action"`
	ResourceKind string          `json:"resource_kind"`
	ResourceID   string          `json:"resource_id"`
	Before       json.RawMessage `json:"before"`
	After        json.RawMessage `json:"after"`
}

// Every change made through the admin API is in the audit log with who made it, and no
// secret is: not the created key's, not the admin token, neither in GET /admin/audit nor in
// the store's bytes (the SQLite file, pg_dump of a real PostgreSQL). Without a log store the
// log is kept in memory.
func TestAuditLog(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		testAuditLog(t, logsConfigURL("sqlite://"+filepath.Join(dir, "logs.db")), "logs", func() []byte {
			files, _ := filepath.Glob(filepath.Join(dir, "logs.db*"))
			var all []byte
			for _, fn := range files {
				b, err := os.ReadFile(fn)
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, b...)
			}
			return all
		})
	})
	t.Run("postgres", func(t *testing.T) {
		pg := pgtest.Start(t)
		testAuditLog(t, logsConfigURL(pg.URL), "logs", func() []byte { return pg.Dump(t, "sluice") })
	})
	t.Run("memory", func(t *testing.T) {
		testAuditLog(t, `
auth: {admin_token: `+logsAdmin+`}
providers: {sim: {kind: sim}}
models: {default: [sim/echo]}
`, "memory", nil)
	})
}

func testAuditLog(t *testing.T, yaml, store string, stored func() []byte) {
	url := serveGate(t, yaml, nil, time.Minute, nil)
	id, secret := createKey(t, url, logsAdmin, `{"name":"audited","rpm":10}`)
	for _, c := range []struct{ method, path, body string }{
		{"PATCH", "/admin/keys/" + id, `{"rpm":20,"budget":{"daily_usd":3}}`},
		{"PATCH", "/admin/keys/" + id, `{"rpm":-5}`}, // refused: not recorded
		{"DELETE", "/admin/cache", ""},
		{"DELETE", "/admin/keys/" + id, ""},
	} {
		do(t, c.method, url+c.path, logsAdmin, c.body)
	}
	r := do(t, "GET", url+"/admin/audit", logsAdmin, "")
	var page struct {
		Store string       `json:"store"`
		Data  []auditEntry `json:"data"`
	}
	if err := json.Unmarshal(r.body, &page); r.status != http.StatusOK || err != nil {
		t.Fatalf("GET /admin/audit: %d %s", r.status, r.body)
	}
	var got []string
	for _, e := range page.Data {
		got = append(got, e.Action+" "+e.ResourceID)
		if e.User != "admin" || e.Role != "admin" {
			t.Errorf("%s: by %q (%q), want the bootstrap admin", e.Action, e.User, e.Role)
		}
	}
	want := []string{"DELETE /admin/keys/{id} " + id, "DELETE /admin/cache ", "PATCH /admin/keys/{id} " + id, "POST /admin/keys " + id}
	if len(got) != len(want) || page.Store != store {
		t.Fatalf("got %q in %q, want %q in %q", got, page.Store, want, store)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d: %q, want %q", i, got[i], want[i])
		}
	}
	if p := page.Data[2]; !bytes.Contains(p.Before, []byte(`"rpm":10`)) || !bytes.Contains(p.After, []byte(`"rpm":20`)) {
		t.Errorf("the patch's before %s and after %s", p.Before, p.After)
	}
	// Filters: by resource; an unknown filter is a 400 in the admin API's error body.
	r = do(t, "GET", url+"/admin/audit?resource_kind=key&resource_id="+id+"&limit=1", logsAdmin, "")
	if !bytes.Contains(r.body, []byte(`"next_cursor":"`)) || bytes.Count(r.body, []byte(`"action"`)) != 1 {
		t.Errorf("a page of one: %s", r.body)
	}
	if r := do(t, "GET", url+"/admin/audit?who=admin", logsAdmin, ""); r.status != 400 || r.errCode() != "invalid_filter" {
		t.Errorf("unknown filter: %d %s", r.status, r.body)
	}
	if r := do(t, "GET", url+"/admin/audit", "", ""); r.status != 401 {
		t.Errorf("without the admin token: %d", r.status)
	}

	all := do(t, "GET", url+"/admin/audit?limit=1000", logsAdmin, "").body
	if bytes.Contains(all, []byte(secret)) || bytes.Contains(all, []byte(logsAdmin)) {
		t.Errorf("GET /admin/audit quotes a secret: %s", all)
	}
	if stored == nil {
		return
	}
	b := stored()
	if !bytes.Contains(b, []byte("PATCH /admin/keys/{id}")) {
		t.Fatal("the store's bytes do not hold the audit log: the check below would prove nothing")
	}
	if bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte(logsAdmin)) {
		t.Error("the store's bytes hold a secret")
	}
}
