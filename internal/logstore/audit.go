package logstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The audit log (issue 37): one entry per change made through the admin API, kept in its
// own table of the same store as the request log. Entries are never deleted by retention:
// changes are rare (a few a day, not a few a second) and an audit trail that forgets is not
// one; an operator who must prune does so in SQL (DELETE FROM sluice_audit WHERE ...).

// auditTable is the audit log's table in both stores (not partitioned: it stays small).
const auditTable = "sluice_audit"

// AuditEntry is one change: who made it, when, what, and the resource before and after. The
// caller strips secrets from Before and After; the store keeps them as given.
type AuditEntry struct {
	// ID is time-ordered (telemetry.RequestID), unique.
	ID   string    `json:"id"`
	Time time.Time `json:"time"`
	// User and Role are the principal's (auth.Principal), or "system:oidc" in no role for a
	// user an OpenID Connect sign-in made or changed (admin.OIDCActor).
	User string `json:"user"`
	Role string `json:"role"`
	// Action is the method and the route's pattern: "PATCH /admin/keys/{id}".
	Action string `json:"action"`
	// ResourceKind is what was changed ("key", "cache", ...) and ResourceID which one ("":
	// the route names none, as a cache clear).
	ResourceKind string `json:"resource_kind"`
	ResourceID   string `json:"resource_id"`
	// Status is the HTTP status the change answered.
	Status int `json:"status"`
	// Before and After are JSON values, null when there is none (a creation has no before, a
	// deletion no after).
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
}

// AuditFilter selects entries: From <= time < To (a zero bound: none) and each field set.
type AuditFilter struct {
	From, To     time.Time
	User         string
	ResourceKind string
	ResourceID   string
	// Limit is the page size, 1 to MaxLimit; 0 means DefaultLimit.
	Limit int
	// Cursor is AuditPage.NextCursor of the page before.
	Cursor string
}

// AuditPage is one page of entries, newest first, and the cursor of the next ("": the last).
type AuditPage struct {
	Entries    []AuditEntry
	NextCursor string
}

// AuditStore keeps the audit log. Both SQL stores implement it, and AuditMemory when no
// store is configured. Safe for concurrent use.
type AuditStore interface {
	// WriteAudit stores e at once (changes are rare: no queue); an entry whose id is already
	// stored is skipped. An entry without id or time is an llm.Invalid error.
	WriteAudit(ctx context.Context, e AuditEntry) error
	// QueryAudit returns one page of the entries f selects, newest first (time, then id).
	QueryAudit(ctx context.Context, f AuditFilter) (AuditPage, error)
}

var (
	_ AuditStore = (*sqliteStore)(nil)
	_ AuditStore = (*pgStore)(nil)
)

// auditParams are the query parameters ParseAuditFilter knows.
var auditParams = []string{"from", "to", "user", "resource_kind", "resource_id", "limit", "cursor"}

// ParseAuditFilter reads a filter from query parameters (GET /admin/audit): from and to
// (RFC 3339; no default: the whole log), user, resource_kind, resource_id, limit (1 to
// 1000, default 100) and cursor. Anything else is an *llm.Error (400, invalid_filter)
// naming the parameter, as ParseFilter's.
func ParseAuditFilter(v url.Values) (AuditFilter, error) {
	var f AuditFilter
	if err := checkParams(v, auditParams); err != nil {
		return f, err
	}
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"from", &f.From}, {"to", &f.To}} {
		if s := v.Get(p.name); s != "" {
			t, err := parseTime(s)
			if err != nil {
				return AuditFilter{}, badFilter(p.name, "%s: %q is not an RFC 3339 time (2026-01-02T15:04:05Z)", p.name, clip(s))
			}
			*p.dst = t
		}
	}
	if !f.From.IsZero() && !f.To.IsZero() && f.From.After(f.To) {
		return AuditFilter{}, badFilter("from", "from (%s) is after to (%s)", f.From.Format(time.RFC3339Nano), f.To.Format(time.RFC3339Nano))
	}
	for _, p := range []struct {
		name string
		dst  *string
	}{{"user", &f.User}, {"resource_kind", &f.ResourceKind}, {"resource_id", &f.ResourceID}} {
		s := v.Get(p.name)
		if err := checkText(p.name, s, maxText); err != nil {
			return AuditFilter{}, err
		}
		*p.dst = s
	}
	var err error
	if f.Limit, err = parseLimit(v.Get("limit")); err != nil {
		return AuditFilter{}, err
	}
	if s := v.Get("cursor"); s != "" {
		if _, err := decodeCursor(s); err != nil {
			return AuditFilter{}, badFilter("cursor", "cursor: %q is not a cursor this API gave (take next_cursor as it is)", clip(s))
		}
		f.Cursor = s
	}
	return f, nil
}

// prepareAudit returns e as the stores keep it: time in UTC at microseconds, text valid
// UTF-8 without NUL, absent values null.
func prepareAudit(e AuditEntry) (AuditEntry, error) {
	if e.ID == "" || len(e.ID) > maxIDLen || clean(e.ID) != e.ID {
		return e, errorf("an audit entry needs an id of 1 to %d bytes of text", maxIDLen)
	}
	if e.Time.IsZero() {
		return e, errorf("audit entry %q has no time", e.ID)
	}
	e.Time = e.Time.UTC().Truncate(time.Microsecond)
	for _, p := range []*string{&e.User, &e.Role, &e.Action, &e.ResourceKind, &e.ResourceID} {
		*p = clean(*p)
	}
	for _, p := range []*json.RawMessage{&e.Before, &e.After} {
		if len(*p) == 0 {
			*p = json.RawMessage("null")
		} else if !json.Valid(*p) {
			return e, errorf("audit entry %q: before and after must be JSON", e.ID)
		}
	}
	return e, nil
}

// WriteAudit is the same SQL in both stores but for the time column and placeholders.
func (s *sqlStore) WriteAudit(ctx context.Context, e AuditEntry) error {
	e, err := prepareAudit(e)
	if err != nil {
		return err
	}
	doc, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("logstore: audit entry %q: %w", e.ID, err)
	}
	a := &args{dollar: s.d.dollar}
	q := fmt.Sprintf(`INSERT INTO %s (id, %s, user_id, role, action, resource_kind, resource_id, status, doc)
		VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING`, auditTable, s.d.timeCol,
		a.add(e.ID), a.add(s.d.timeArg(e.Time)), a.add(e.User), a.add(e.Role), a.add(e.Action),
		a.add(e.ResourceKind), a.add(e.ResourceID), a.add(e.Status), a.add(string(doc)))
	if _, err := s.db.ExecContext(ctx, q, a.list...); err != nil {
		return fmt.Errorf("logstore: %s audit write: %w", s.d.name, err)
	}
	return nil
}

func (s *sqlStore) QueryAudit(ctx context.Context, f AuditFilter) (AuditPage, error) {
	a := &args{dollar: s.d.dollar}
	t := s.d.timeCol
	var k keyset
	if f.Cursor != "" {
		var err error
		if k, err = decodeCursor(f.Cursor); err != nil {
			return AuditPage{}, badFilter("cursor", "cursor: not a cursor this API gave")
		}
		f.To = through(k, f.To)
	}
	conds := s.between(f.From, f.To, a)
	for _, c := range []struct{ col, v string }{{"user_id", f.User}, {"resource_kind", f.ResourceKind}, {"resource_id", f.ResourceID}} {
		if c.v != "" {
			conds = append(conds, c.col+" = "+a.add(c.v))
		}
	}
	if f.Cursor != "" {
		conds = append(conds, fmt.Sprintf("(%s, id) < (%s, %s)", t, a.add(s.d.timeArg(k.Time)), a.add(k.ID)))
	}
	n := limitOf(f.Limit)
	q := fmt.Sprintf("SELECT doc FROM %s WHERE %s ORDER BY %s DESC, id DESC LIMIT %s",
		auditTable, strings.Join(conds, " AND "), t, a.add(n+1))
	rows, err := s.db.QueryContext(ctx, q, a.list...)
	if err != nil {
		return AuditPage{}, fmt.Errorf("logstore: %s audit query: %w", s.d.name, err)
	}
	defer rows.Close()
	var es []AuditEntry
	for rows.Next() {
		var doc sql.NullString
		if err := rows.Scan(&doc); err != nil {
			return AuditPage{}, fmt.Errorf("logstore: %s audit query: %w", s.d.name, err)
		}
		var e AuditEntry
		if err := json.Unmarshal([]byte(doc.String), &e); err != nil {
			return AuditPage{}, fmt.Errorf("logstore: a stored audit entry is not JSON: %w", err)
		}
		e.Time = e.Time.UTC()
		es = append(es, e)
	}
	if err := rows.Err(); err != nil {
		return AuditPage{}, fmt.Errorf("logstore: %s audit query: %w", s.d.name, err)
	}
	return auditPage(es, n), nil
}

// auditPage cuts es (newest first, up to n+1 of them) to a page of n and its next cursor.
func auditPage(es []AuditEntry, n int) AuditPage {
	p := AuditPage{Entries: es}
	if len(es) > n {
		p.Entries = es[:n]
		last := es[n-1]
		p.NextCursor = encodeCursor(keyset{Time: last.Time, ID: last.ID})
	}
	return p
}

// parseLimit reads a page size: "" is DefaultLimit, else 1 to MaxLimit.
func parseLimit(s string) (int, error) {
	if s == "" {
		return DefaultLimit, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxLimit {
		return 0, badFilter("limit", "limit: %q is not a number from 1 to %d", clip(s), MaxLimit)
	}
	return n, nil
}

// limitOf is a page size with the defaults applied.
func limitOf(n int) int {
	if n <= 0 {
		return DefaultLimit
	}
	return min(n, MaxLimit)
}
