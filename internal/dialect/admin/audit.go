package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/logstore"
	"github.com/sluice-gw/sluice/internal/telemetry"
)

// The audit log (issue 37): every route that changes something (POST, PATCH, PUT, DELETE)
// is wrapped by Routes, those added later included, so that a successful change records who
// made it, when, what, and the resource before and after, without secrets. A failed change
// (an error, or a status of 300 or more) changed nothing and is not recorded. The entry is
// written before the answer goes out; if the write fails the change stands all the same
// (it is made): the error is logged and counted (sluice_audit_dropped_total), and the
// caller gets the change's answer.

// AuditStore is where the changes are recorded: the log store's audit table, or a
// logstore.AuditMemory when no log is kept.
type AuditStore = logstore.AuditStore

// auditWriteTimeout bounds the audit write of a change, which outlives a client that left.
const auditWriteTimeout = 5 * time.Second

// audited returns rs with every changing route recording its changes in a.Audit.
func (a API) audited(rs []Route) []Route {
	if a.Audit == nil {
		return rs
	}
	gets := map[string]Op{}
	for _, rt := range rs {
		if rt.Method == http.MethodGet {
			gets[rt.Path] = rt.Op
		}
	}
	out := make([]Route, len(rs))
	for i, rt := range rs {
		out[i] = rt
		switch rt.Method {
		case http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete:
			var get Op // the route's own GET of one resource: before, from it
			if strings.Contains(rt.Path, "/:") {
				get = gets[rt.Path]
			}
			out[i].Op = a.record(rt, get)
		}
	}
	return out
}

// record wraps rt's Op: get (nil: none) reads the resource before the change.
func (a API) record(rt Route, get Op) Op {
	action, kind := rt.Method+" "+pattern(rt.Path), resourceKind(rt.Path)
	// named: the path ends with the resource's id (/admin/keys/:id); else it is a collection
	// (a creation) or an action (a cache clear).
	named := strings.HasPrefix(rt.Path[strings.LastIndex(rt.Path, "/")+1:], ":")
	return func(ctx context.Context, in Input) (int, any, error) {
		var before any
		if get != nil {
			if st, v, err := get(ctx, in); err == nil && st < 300 {
				before = v
			}
		}
		status, v, err := rt.Op(ctx, in)
		if err != nil || status >= 300 {
			return status, v, err
		}
		after := v
		if _, stream := v.(Stream); stream || (rt.Method == http.MethodDelete && get != nil) {
			after = nil // a deleted resource has no after; its answer says only that it is gone
		}
		e := logstore.AuditEntry{ID: telemetry.RequestID(""), Time: time.Now(), Action: action,
			ResourceKind: kind, ResourceID: in.ID, Status: status, Before: Strip(before), After: Strip(after)}
		if p := auth.PrincipalFrom(ctx); p != nil {
			e.User, e.Role = p.User, string(p.Role)
		}
		if !named {
			e.ResourceID = createdID(e.After) // a creation names its resource in its answer
		}
		a.write(ctx, e)
		return status, v, err
	}
}

// write records e in a.Audit within auditWriteTimeout, even after the caller left. A
// failure is logged and counted, not returned: the change it records is made.
func (a API) write(ctx context.Context, e logstore.AuditEntry) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), auditWriteTimeout)
	defer cancel()
	if err := a.Audit.WriteAudit(wctx, e); err != nil {
		a.logger().ErrorContext(ctx, "audit: the change was made but its audit entry was not written",
			"action", e.Action, "resource_kind", e.ResourceKind, "resource_id", e.ResourceID, "error", err)
		telemetry.AuditDropped(ctx, 1)
	}
}

// OIDCActor is who the audit log names for the users an OpenID Connect sign-in makes or
// changes: the issuer's groups decide their role and teams, not the user nor an admin.
const OIDCActor = "system:oidc"

// SignedIn records what the console's sign-in through the issuer named issuer made of user
// after (before nil: it was made) or changed of it (before: the user as it was), as the
// admin API records a change of a user (issue 37): kind user, by OIDCActor in no role, the
// action the issuer's callback, status 201 for a creation and 200 for a change. A sign-in
// that changed nothing is not recorded. Like a change of the admin API, the sign-in stands
// if the write fails.
func (a API) SignedIn(ctx context.Context, issuer string, before, after *auth.User) {
	if a.Audit == nil || after == nil {
		return
	}
	e := logstore.AuditEntry{ID: telemetry.RequestID(""), Time: time.Now(), User: OIDCActor,
		Action: "GET /console/oidc/" + issuer + "/callback", ResourceKind: "user", ResourceID: after.ID,
		Status: http.StatusCreated, Before: json.RawMessage("null"), After: Strip(encodeUser(after))}
	if before != nil {
		e.Status, e.Before = http.StatusOK, Strip(encodeUser(before))
		if bytes.Equal(e.Before, e.After) {
			return
		}
	}
	a.write(ctx, e)
}

// AnonymousActor is who the audit log names for a failed attempt to authenticate: nobody
// known.
const AnonymousActor = "anonymous"

// AuthFailed records a failed attempt to authenticate (auth.Throttle, issue 47): kind
// auth_failure, by AnonymousActor, the request's method and path as its action, its
// client's address as the resource, status 401, the failure (surface, reason, address, the
// token's fingerprint: never the token) as after.
func (a API) AuthFailed(ctx context.Context, f auth.Failure) {
	if a.Audit == nil {
		return
	}
	a.write(ctx, logstore.AuditEntry{ID: telemetry.RequestID(""), Time: time.Now(), User: AnonymousActor,
		Action: f.Action, ResourceKind: "auth_failure", ResourceID: f.Client, Status: http.StatusUnauthorized,
		Before: json.RawMessage("null"), After: Strip(f)})
}

func (a API) logger() *slog.Logger {
	if a.Log != nil {
		return a.Log
	}
	return slog.Default()
}

// pattern is an echo path as the audit log and the OpenAPI spec write it: /admin/keys/{id}.
func pattern(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if name, ok := strings.CutPrefix(s, ":"); ok {
			segs[i] = "{" + name + "}"
		}
	}
	return strings.Join(segs, "/")
}

// resourceKind is what a route changes: the last literal segment of its path, in the
// singular (/admin/keys/:id: key; /admin/cache: cache; /admin/users/:id/tokens: token).
func resourceKind(path string) string {
	segs := strings.Split(path, "/")
	for i := len(segs) - 1; i >= 0; i-- {
		if s := segs[i]; s != "" && !strings.HasPrefix(s, ":") {
			return strings.TrimSuffix(s, "s")
		}
	}
	return ""
}

// createdID is the "id" member of a creation's answer, "" when there is none.
func createdID(after json.RawMessage) string {
	var v struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(after, &v)
	return v.ID
}

// secretNames are the members whose values the audit log never keeps, in any object at any
// depth (compared case-insensitively); secretSuffixes catch their compounds (access_token,
// admin_token, webhook_secret, virtual_key).
var (
	secretNames    = []string{"key", "token", "secret", "password", "hash", "client_secret", "api_key", "authorization"}
	secretSuffixes = []string{"_key", "_token", "_secret", "_password"}
)

// Redacted is what replaces a secret in the audit log: the member stays, so a diff shows
// that a secret changed, never what it is.
const Redacted = "[redacted]"

// Strip is v as JSON with every secret replaced by Redacted: the members secretNames names,
// and any string that starts with "sk-" (a provider's or a virtual key's form) wherever it
// is. nil is JSON null.
func Strip(v any) json.RawMessage {
	if v == nil {
		return json.RawMessage("null")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // numbers as written: no float rounding of ids or amounts
	var x any
	if err := d.Decode(&x); err != nil {
		return json.RawMessage("null")
	}
	out, err := json.Marshal(strip(x))
	if err != nil {
		return json.RawMessage("null")
	}
	return out
}

func strip(x any) any {
	switch v := x.(type) {
	case map[string]any:
		for k, m := range v {
			if secretName(k) && m != nil {
				v[k] = Redacted
			} else {
				v[k] = strip(m)
			}
		}
	case []any:
		for i, m := range v {
			v[i] = strip(m)
		}
	case string:
		if strings.HasPrefix(v, "sk-") {
			return Redacted
		}
	}
	return x
}

func secretName(k string) bool {
	k = strings.ToLower(k)
	for _, n := range secretNames {
		if k == n {
			return true
		}
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(k, s) {
			return true
		}
	}
	return false
}

// auditList serves GET /admin/audit: a page of the audit log, newest first, and the cursor
// of the next. Store says where it is kept: "logs" (the log store) or "memory" (this
// replica's last entries, logs.url being empty).
func (a API) auditList(ctx context.Context, in Input) (int, any, error) {
	f, err := logstore.ParseAuditFilter(in.Query)
	if err != nil {
		return 0, nil, err
	}
	var p logstore.AuditPage
	if a.Audit != nil {
		if p, err = a.Audit.QueryAudit(ctx, f); err != nil {
			return 0, nil, unreachableLogs(err)
		}
	}
	if p.Entries == nil {
		p.Entries = []logstore.AuditEntry{}
	}
	var next *string
	if p.NextCursor != "" {
		next = &p.NextCursor
	}
	store, kept := "logs", a.Audit
	for u, ok := kept.(interface{ Unwrap() logstore.AuditStore }); ok; u, ok = kept.(interface{ Unwrap() logstore.AuditStore }) {
		kept = u.Unwrap() // a store wrapped (the gateway's masking): where its entries go
	}
	if _, mem := kept.(*logstore.AuditMemory); mem || kept == nil {
		store = "memory"
	}
	return http.StatusOK, struct {
		Object string                `json:"object"`
		Store  string                `json:"store"`
		Data   []logstore.AuditEntry `json:"data"`
		Next   *string               `json:"next_cursor"`
	}{"list", store, p.Entries, next}, nil
}
