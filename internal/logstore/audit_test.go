package logstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
)

// testAudit runs against SQLite, PostgreSQL (the suite) and AuditMemory: entries round-trip,
// filters select, pages cover every entry once in order, an id is stored once, and the
// retention leaves the audit log alone.
func testAudit(t *testing.T, open openFunc) {
	st := open(t, 24*time.Hour)
	testAuditStore(t, st.(AuditStore))
	// Retention keeps the audit log: a year-old entry stays.
	ctx := context.Background()
	if err := st.Retain(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	p, err := st.(AuditStore).QueryAudit(ctx, AuditFilter{To: time.Now().AddDate(0, 0, -300)})
	if err != nil || !slices.Equal(auditIDs(p.Entries), []string{"a00"}) {
		t.Errorf("after Retain: %v, %v; want the year-old entry kept", auditIDs(p.Entries), err)
	}
}

func TestAuditMemory(t *testing.T) {
	testAuditStore(t, NewAuditMemory(0))
	// The bound: the last n entries.
	m := NewAuditMemory(3)
	base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := range 5 {
		if err := m.WriteAudit(context.Background(), AuditEntry{ID: fmt.Sprint("e", i), Time: base.Add(time.Duration(i) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	p, _ := m.QueryAudit(context.Background(), AuditFilter{})
	if got := auditIDs(p.Entries); !slices.Equal(got, []string{"e4", "e3", "e2"}) {
		t.Errorf("got %v, want the last three, newest first", got)
	}
}

// sameJSON reports whether b is the JSON value s (HTML characters may come back escaped).
func sameJSON(b json.RawMessage, s string) bool {
	var x, y any
	return json.Unmarshal(b, &x) == nil && json.Unmarshal([]byte(s), &y) == nil && reflect.DeepEqual(x, y)
}

func auditIDs(es []AuditEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func testAuditStore(t *testing.T, st AuditStore) {
	ctx := context.Background()
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	// Six entries: k0 a year old, two at the same time (the id breaks the tie), two users.
	var want []AuditEntry
	for i := range 6 {
		at := base.Add(time.Duration(i) * time.Minute)
		if i == 0 {
			at = base.AddDate(-1, 0, 0)
		}
		if i == 3 {
			at = want[2].Time
		}
		e := AuditEntry{ID: fmt.Sprintf("a%02d", i), Time: at, User: "admin", Role: "admin",
			Action: "PATCH /admin/keys/{id}", ResourceKind: "key", ResourceID: fmt.Sprint("k", i%3), Status: 200,
			Before: json.RawMessage(fmt.Sprintf(`{"rpm":%d}`, i)), After: json.RawMessage(fmt.Sprintf(`{"rpm":%d,"name":"é<b>"}`, i+1))}
		if i == 5 {
			e.User, e.Role, e.Action, e.ResourceKind, e.ResourceID, e.Before, e.After = "alice", "team_admin", "DELETE /admin/cache", "cache", "", nil, json.RawMessage(`{"deleted":3}`)
		}
		want = append(want, e)
	}
	for _, e := range want {
		if err := st.WriteAudit(ctx, e); err != nil {
			t.Fatalf("WriteAudit(%s): %v", e.ID, err)
		}
	}
	if err := st.WriteAudit(ctx, want[1]); err != nil { // again: stored once
		t.Fatal(err)
	}
	for _, bad := range []AuditEntry{{Time: base}, {ID: "x"}, {ID: "y", Time: base, Before: json.RawMessage("{")}} {
		var le *llm.Error
		if err := st.WriteAudit(ctx, bad); !errors.As(err, &le) || le.Kind != llm.Invalid {
			t.Errorf("WriteAudit(%+v): %v, want an invalid entry", bad, err)
		}
	}

	p, err := st.QueryAudit(ctx, AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	// Newest first; a03 and a02 share a time, a03 first.
	if got := auditIDs(p.Entries); !slices.Equal(got, []string{"a05", "a04", "a03", "a02", "a01", "a00"}) || p.NextCursor != "" {
		t.Fatalf("got %v %q, want all six newest first", got, p.NextCursor)
	}
	got := p.Entries[len(p.Entries)-1]
	if !got.Time.Equal(want[0].Time) || got.User != "admin" || got.Action != "PATCH /admin/keys/{id}" || got.ResourceID != "k0" ||
		!sameJSON(got.Before, `{"rpm":0}`) || !sameJSON(got.After, `{"rpm":1,"name":"é<b>"}`) || got.Status != 200 {
		t.Errorf("round trip: got %+v, want %+v", got, want[0])
	}
	if e := p.Entries[0]; string(e.Before) != "null" || e.Role != "team_admin" {
		t.Errorf("no before: got %s (%s), want null", e.Before, e.Role)
	}

	for _, c := range []struct {
		f    AuditFilter
		want []string
	}{
		{AuditFilter{User: "alice"}, []string{"a05"}},
		{AuditFilter{ResourceKind: "key", ResourceID: "k1"}, []string{"a04", "a01"}},
		{AuditFilter{From: base}, []string{"a05", "a04", "a03", "a02", "a01"}},
		{AuditFilter{From: base.Add(time.Minute), To: base.Add(4 * time.Minute)}, []string{"a03", "a02", "a01"}},
		{AuditFilter{ResourceKind: "team"}, nil},
	} {
		p, err := st.QueryAudit(ctx, c.f)
		if err != nil || !slices.Equal(auditIDs(p.Entries), c.want) {
			t.Errorf("%+v: got %v %v, want %v", c.f, auditIDs(p.Entries), err, c.want)
		}
	}

	// Pages of two: every entry once, in order, the tie across a page's edge included.
	var all []string
	f := AuditFilter{Limit: 2}
	for pages := 0; ; pages++ {
		p, err := st.QueryAudit(ctx, f)
		if err != nil || pages > 5 {
			t.Fatalf("page %d: %v", pages, err)
		}
		all = append(all, auditIDs(p.Entries)...)
		if p.NextCursor == "" {
			break
		}
		f.Cursor = p.NextCursor
	}
	if !slices.Equal(all, []string{"a05", "a04", "a03", "a02", "a01", "a00"}) {
		t.Errorf("paged: got %v", all)
	}
	f = AuditFilter{Limit: 3}
	p, _ = st.QueryAudit(ctx, f)
	f.Cursor = p.NextCursor
	if p2, _ := st.QueryAudit(ctx, f); !slices.Equal(auditIDs(p2.Entries), []string{"a02", "a01", "a00"}) {
		t.Errorf("second page of three after %v: %v", auditIDs(p.Entries), auditIDs(p2.Entries))
	}
	if _, err := st.QueryAudit(ctx, AuditFilter{Cursor: "nope"}); err == nil {
		t.Error("a bad cursor was taken")
	}
}

func TestParseAuditFilter(t *testing.T) {
	f, err := ParseAuditFilter(url.Values{"user": {"alice"}, "resource_kind": {"key"}, "resource_id": {"k1"},
		"from": {"2026-12-01T00:00:00Z"}, "limit": {"5"}})
	if err != nil || f.User != "alice" || f.ResourceKind != "key" || f.ResourceID != "k1" || f.Limit != 5 ||
		!f.From.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) || !f.To.IsZero() {
		t.Fatalf("got %+v, %v", f, err)
	}
	if f, err := ParseAuditFilter(url.Values{}); err != nil || f.Limit != DefaultLimit || !f.From.IsZero() {
		t.Errorf("defaults: got %+v %v, want the whole log, 100 a page", f, err)
	}
	for _, c := range []struct {
		v     url.Values
		param string
	}{
		{url.Values{"key": {"x"}}, "key"},
		{url.Values{"user": {"a", "b"}}, "user"},
		{url.Values{"limit": {"0"}}, "limit"},
		{url.Values{"from": {"yesterday"}}, "from"},
		{url.Values{"from": {"2026-12-02T00:00:00Z"}, "to": {"2026-12-01T00:00:00Z"}}, "from"},
		{url.Values{"cursor": {"x"}}, "cursor"},
		{url.Values{"resource_id": {"a\x00"}}, "resource_id"},
	} {
		var le *llm.Error
		if _, err := ParseAuditFilter(c.v); !errors.As(err, &le) || le.Param != c.param || llm.HTTPStatus(err) != 400 {
			t.Errorf("%v: got %v, want a 400 on %s", c.v, err, c.param)
		}
	}
}
