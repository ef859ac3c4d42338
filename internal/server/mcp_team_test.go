package server_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
)

const (
	mcpReader = "sk-mcp-reader-0123456789abcdefghijklm"
	mcpOpen   = "sk-mcp-open-0123456789abcdefghijklmno"
	mcpTeamed = "admin-token-mcp-teams"
)

// A key's team narrows what the key may use of /mcp (issue 37), at the same place as the
// key's own access: a tool the team does not allow is neither listed nor callable, though
// the key allows every server; a team without mcp restricts nothing; a team's access changed
// through the admin API holds from the next request on; the team's rpm counts the tool calls.
func TestMCPTeamAccess(t *testing.T) {
	yaml := simConfig + `
auth: {admin_token: ` + mcpTeamed + `}
tools:
  docs: {mcp: {url: "${DOCS}"}}
teams:
  - {name: readers, mcp: {tools: ["docs__search"]}, limits: {rpm: 3}}
  - {name: open}
keys:
  - {name: reader, hash: ` + auth.Hash(mcpReader) + `, team: readers, mcp: {servers: ["*"]}}
  - {name: open, hash: ` + auth.Hash(mcpOpen) + `, team: open, mcp: {servers: ["*"]}}
`
	url := serveGate(t, yaml, map[string]string{"DOCS": mcpDocs(t)}, time.Hour, nil)

	rsid := mcpInit(t, url, mcpReader)
	if got := mcpNames(t, url, mcpReader, rsid); !slices.Equal(got, []string{"docs__search"}) {
		t.Errorf("the readers' key lists %v, want docs__search only (its team's)", got)
	}
	if _, m := mcpPost(t, url, mcpReader, rsid, mcpCall("docs__fetch", `{}`)); rpcCode(m) != -32602 {
		t.Errorf("the readers' key calling docs__fetch: got %v, want it unknown (-32602)", m)
	}
	if _, m := mcpPost(t, url, mcpReader, rsid, mcpCall("docs__search", `{"q":"go"}`)); m["result"] == nil {
		t.Errorf("the readers' key calling docs__search: got %v, want a result", m)
	}
	osid := mcpInit(t, url, mcpOpen)
	if got := mcpNames(t, url, mcpOpen, osid); !slices.Equal(got, []string{"docs__search", "docs__fetch"}) {
		t.Errorf("the open team's key lists %v, want both tools", got)
	}
	// The team's rpm (3): initialize and list are not tool calls; the second call of the
	// session above was the first. Two more pass, the next is the team's refusal.
	for i := range 2 {
		if _, m := mcpPost(t, url, mcpReader, rsid, mcpCall("docs__search", `{}`)); m["result"] == nil {
			t.Fatalf("call %d within the team's rpm: got %v", i, m)
		}
	}
	if _, m := mcpPost(t, url, mcpReader, rsid, mcpCall("docs__search", `{}`)); rpcCode(m) != -32029 {
		t.Errorf("a fourth call of the team's keys: got %v, want the team's rpm (-32029)", m)
	}

	// An API-made team: its access set, then lifted, through the admin API.
	if r := do(t, "POST", url+"/admin/teams", mcpTeamed, `{"name":"fetchers","mcp":{"tools":["docs__fetch"]}}`); r.status != http.StatusCreated {
		t.Fatalf("POST /admin/teams: got %d %s", r.status, r.body)
	}
	_, secret := createKey(t, url, mcpTeamed, `{"name":"fetcher","team":"fetchers","mcp":{"servers":["*"]}}`)
	fsid := mcpInit(t, url, secret)
	if got := mcpNames(t, url, secret, fsid); !slices.Equal(got, []string{"docs__fetch"}) {
		t.Errorf("the fetchers' key lists %v, want docs__fetch only", got)
	}
	if _, m := mcpPost(t, url, secret, fsid, mcpCall("docs__search", `{}`)); rpcCode(m) != -32602 {
		t.Errorf("the fetchers' key calling docs__search: got %v, want it unknown", m)
	}
	if r := do(t, "PATCH", url+"/admin/teams/fetchers", mcpTeamed, `{"mcp":{"servers":[]}}`); r.status != http.StatusOK {
		t.Fatalf("PATCH /admin/teams/fetchers: got %d %s", r.status, r.body)
	}
	if got := mcpNames(t, url, secret, fsid); len(got) != 0 {
		t.Errorf("after the team's mcp became empty, the key lists %v, want nothing", got)
	}
	if r := do(t, "PATCH", url+"/admin/teams/fetchers", mcpTeamed, `{"mcp":null}`); r.status != http.StatusOK {
		t.Fatalf("PATCH /admin/teams/fetchers: got %d %s", r.status, r.body)
	}
	if got := mcpNames(t, url, secret, fsid); !slices.Equal(got, []string{"docs__search", "docs__fetch"}) {
		t.Errorf("after the team's restriction was lifted, the key lists %v, want both tools", got)
	}
}
