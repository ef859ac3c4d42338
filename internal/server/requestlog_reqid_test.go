package server_test

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// withID sends one request with the X-Request-Id id (none when ""), with key.
func withID(t *testing.T, method, u, key, id, body string) reply {
	t.Helper()
	if id == "" {
		return do(t, method, u, key, body)
	}
	return do(t, method, u, key, body, "X-Request-Id", id)
}

// reqIDRecord is what these tests read of a record.
type reqIDRecord struct {
	ID        string `json:"id"`
	RequestID string `json:"request_id"`
	Team      string `json:"team"`
}

// TestRequestLogSharedRequestID (issue 47): the client's X-Request-Id is no longer the
// record's id. Two teams' clients that send the same id, and a client that retries with it,
// make one record each, each with the gateway's own id (X-Sluice-Record-Id) and the shared
// request id (X-Request-Id, echoed); ?request_id= lists them all for admin and only its
// team's for a viewer, on /admin/logs and its export; GET /admin/logs/{request id}, escaped,
// is the newest the caller may read; an id with a space or too long is not taken.
func TestRequestLogSharedRequestID(t *testing.T) {
	u := serveGate(t, sqliteLogs(t, "")+simConfig+"teams:\n  - {name: a}\n  - {name: b}\n", nil, time.Minute, nil)
	_, keyA := createKey(t, u, logsAdmin, `{"name":"ka","team":"a"}`)
	_, keyB := createKey(t, u, logsAdmin, `{"name":"kb","team":"b"}`)
	viewer := func(team string) string {
		var usr, tok struct{ ID, Token string }
		r := do(t, "POST", u+"/admin/users", logsAdmin, `{"email":"v-`+team+`@example.com","role":"viewer","teams":["`+team+`"]}`)
		decode(t, r.body, &usr)
		decode(t, do(t, "POST", u+"/admin/users/"+usr.ID+"/tokens", logsAdmin, `{"name":"ci"}`).body, &tok)
		if tok.Token == "" {
			t.Fatalf("no personal token for a viewer of %s: %s", team, r.body)
		}
		return tok.Token
	}
	viewerA, viewerB := viewer("a"), viewer("b")

	const shared = "shared/50%25 id" // the space is not taken (below); the rest is
	const id = "order/42%"
	chat := say("default", "Hello there, gateway.", false, "")
	calls := []reply{
		withID(t, "POST", u+"/v1/chat/completions", keyA, id, chat), // team a
		withID(t, "POST", u+"/v1/chat/completions", keyB, id, chat), // team b, the same id
		withID(t, "POST", u+"/v1/chat/completions", keyA, id, chat), // team a again: a retry
	}
	var recIDs []string
	for i, c := range calls {
		rec := c.header.Get("X-Sluice-Record-Id")
		if c.status != 200 || c.header.Get("X-Request-Id") != id || rec == "" || rec == id || slices.Contains(recIDs, rec) {
			t.Fatalf("call %d: got %d, X-Request-Id %q, X-Sluice-Record-Id %q; want 200, the client's id echoed, a record id of its own",
				i, c.status, c.header.Get("X-Request-Id"), rec)
		}
		recIDs = append(recIDs, rec)
	}
	q := "request_id=" + url.QueryEscape(id)
	got := waitLogs(t, u, q, 3) // admin: all three
	for i, r := range got {
		if want := recIDs[2-i]; r.ID != want {
			t.Errorf("admin, record %d: got id %s, want %s (newest first)", i, r.ID, want)
		}
	}

	// Each team's viewer reads its own records of the id, and the export agrees.
	for _, tc := range []struct {
		name, token, team string
		want              []string
	}{{"viewer a", viewerA, "a", []string{recIDs[2], recIDs[0]}}, {"viewer b", viewerB, "b", []string{recIDs[1]}}} {
		var page struct{ Data []reqIDRecord }
		r := do(t, "GET", u+"/admin/logs?"+q, tc.token, "")
		decode(t, r.body, &page)
		var ids []string
		for _, rec := range page.Data {
			ids = append(ids, rec.ID)
			if rec.RequestID != id || rec.Team != tc.team {
				t.Errorf("%s: got record %+v, want request_id %q and team %s", tc.name, rec, id, tc.team)
			}
		}
		if r.status != 200 || !slices.Equal(ids, tc.want) {
			t.Errorf("%s: GET /admin/logs?%s: got %d %v, want %v", tc.name, q, r.status, ids, tc.want)
		}
		ex := do(t, "GET", u+"/admin/logs/export?format=jsonl&"+q, tc.token, "")
		if n := strings.Count(string(ex.body), `"request_id":`); ex.status != 200 || n != len(tc.want) {
			t.Errorf("%s: export: got %d with %d records, want %d", tc.name, ex.status, n, len(tc.want))
		}
		// The request id in the path, escaped as a client would: the newest record the
		// caller may read, never another team's.
		one := do(t, "GET", u+"/admin/logs/"+url.PathEscape(id), tc.token, "")
		var rec reqIDRecord
		decode(t, one.body, &rec)
		if one.status != 200 || rec.ID != tc.want[0] || rec.RequestID != id {
			t.Errorf("%s: GET /admin/logs/%s: got %d %s, want the record %s", tc.name, url.PathEscape(id), one.status, one.body, tc.want[0])
		}
	}
	if r := do(t, "GET", u+"/admin/logs/"+recIDs[0], viewerB, ""); r.status != 404 {
		t.Errorf("viewer b reading team a's record by its id: got %d %s, want 404", r.status, r.body)
	}
	if r := do(t, "GET", u+"/admin/logs/"+recIDs[1], logsAdmin, ""); r.status != 200 || !strings.Contains(string(r.body), `"team":"b"`) {
		t.Errorf("admin reading team b's record by its id: got %d %s", r.status, r.body)
	}

	// A client that sent no id got the record's id, which finds it either way; one whose id
	// is not printable ASCII without spaces, or longer than 128, got one too.
	for _, sent := range []string{"", shared, strings.Repeat("x", 129), "caf\u00e9"} {
		c := withID(t, "POST", u+"/v1/chat/completions", keyA, sent, chat)
		rec := c.header.Get("X-Sluice-Record-Id")
		if c.status != 200 || rec == "" || c.header.Get("X-Request-Id") != rec {
			t.Errorf("X-Request-Id %q: got %d, X-Request-Id %q, record %q; want the record's id as the request id",
				sent, c.status, c.header.Get("X-Request-Id"), rec)
			continue
		}
		if got := waitLogs(t, u, "request_id="+rec, 1); got[0].ID != rec {
			t.Errorf("X-Request-Id %q: request_id=%s: got %+v", sent, rec, got)
		}
	}
}

// TestRequestLogEscapedIDs (issue 47): GET /admin/logs/{id} reads a request id holding '/'
// or '%' whichever way the path escapes it: net/http keeps the escaped path only when it
// must, and echo routes on that one then.
func TestRequestLogEscapedIDs(t *testing.T) {
	u := serveGate(t, sqliteLogs(t, "")+simConfig, nil, time.Minute, nil)
	_, key := createKey(t, u, logsAdmin, `{"name":"k"}`)
	chat := say("default", "Hello there, gateway.", false, "")
	for _, tc := range []struct{ id, path string }{
		{"a/b", "a%2Fb"},             // an escaped '/': the raw path is kept
		{"50%off", "50%25off"},       // an escaped '%' alone: the path is the unescaped one
		{"x/50%/y", "x%2f50%25%2fy"}, // both, in lower case
		{"c%2Fd", "c%252Fd"},         // a '%' that looks like an escape
	} {
		c := withID(t, "POST", u+"/v1/chat/completions", key, tc.id, chat)
		if c.status != 200 || c.header.Get("X-Request-Id") != tc.id {
			t.Fatalf("%q: got %d, X-Request-Id %q", tc.id, c.status, c.header.Get("X-Request-Id"))
		}
		waitLogs(t, u, "request_id="+url.QueryEscape(tc.id), 1)
		r := do(t, "GET", u+"/admin/logs/"+tc.path, logsAdmin, "")
		var rec reqIDRecord
		if err := json.Unmarshal(r.body, &rec); err != nil || r.status != 200 || rec.RequestID != tc.id ||
			rec.ID != c.header.Get("X-Sluice-Record-Id") {
			t.Errorf("GET /admin/logs/%s: got %d %s, want the record of %q", tc.path, r.status, r.body, tc.id)
		}
	}
	// Escaped, the '/' of an id is not a separator: another id, not another route.
	if r := do(t, "GET", u+"/admin/logs/a%2Fc", logsAdmin, ""); r.status != 404 || !strings.Contains(string(r.body), "log_not_found") {
		t.Errorf("GET /admin/logs/a%%2Fc: got %d %s, want 404 log_not_found", r.status, r.body)
	}
}

// TestResponsesSharedRequestID (issue 47): a stored response is named after its request's
// record, not the X-Request-Id its client chose, so two keys' requests with the same one
// are each kept, each for its own key.
func TestResponsesSharedRequestID(t *testing.T) {
	u := serveGate(t, sqliteLogs(t, "")+simConfig, nil, time.Minute, nil)
	_, keyA := createKey(t, u, logsAdmin, `{"name":"ka"}`)
	_, keyB := createKey(t, u, logsAdmin, `{"name":"kb"}`)
	var ids []string
	for _, key := range []string{keyA, keyB} {
		r := withID(t, "POST", u+"/v1/responses", key, "same-id", `{"model":"default","input":"Hello there, gateway.","store":true}`)
		var resp struct{ ID string }
		decode(t, r.body, &resp)
		if r.status != 200 || resp.ID != "resp_"+r.header.Get("X-Sluice-Record-Id") || slices.Contains(ids, resp.ID) {
			t.Fatalf("got %d %s (record %s), want a response named after its own record", r.status, r.body, r.header.Get("X-Sluice-Record-Id"))
		}
		ids = append(ids, resp.ID)
	}
	for i, key := range []string{keyA, keyB} {
		if r := do(t, "GET", u+"/v1/responses/"+ids[i], key, ""); r.status != 200 {
			t.Errorf("GET %s by its key: got %d %s, want 200", ids[i], r.status, r.body)
		}
	}
}
