package admin

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/logstore"
)

// The answers of the role policy (auth.Route, auth.Reach): 403 for what the caller may see
// but not do, 404 (the route's own not-found) for what it may not see.
var forbidden = &llm.Error{Kind: llm.Invalid, Status: http.StatusForbidden, Code: "forbidden", Type: "invalid_request_error",
	Message: "Your role does not allow this."}

// AuthError is the answer to a caller the admin API does not know (err from
// auth.Admins.Principal): a 401, or a 503 when the users' store could not answer; a 429
// for the throttle's refusal (auth.ThrottledError).
func AuthError(err error) error {
	if te := (*auth.ThrottledError)(nil); errors.As(err, &te) {
		return Throttled(te.Wait)
	}
	if err != nil && !auth.Refused(err) {
		return StoreError(err)
	}
	return &llm.Error{Kind: llm.Unauthenticated, Code: "invalid_admin_token", Type: "invalid_request_error",
		Message: "The admin API needs the admin token or a personal token: 'Authorization: Bearer TOKEN'."}
}

// Throttled is the answer to a token from an address or with a fingerprint that failed too
// often (auth.Throttle): a 429 whose Retry-After says when the oldest failure leaves the
// window.
func Throttled(wait time.Duration) error {
	return &llm.Error{Kind: llm.RateLimited, Code: "too_many_failed_attempts", Type: "rate_limit_error", RetryAfter: wait,
		Message: "Too many failed attempts to authenticate from this address or with this token. Retry after the time in Retry-After."}
}

// verdict is the error of v, notFound that of a hidden resource.
func verdict(v auth.Verdict, notFound error) error {
	switch v {
	case auth.Forbid:
		return forbidden
	case auth.Hide:
		return notFound
	}
	return nil
}

// guard asks the policy whether the caller (the context's principal) may call the route at
// all, before op runs: config-wide routes are admin only, a viewer changes nothing.
func guard(method, path string, op Op) Op {
	return func(ctx context.Context, in Input) (int, any, error) {
		if err := verdict(auth.Route(auth.PrincipalFrom(ctx), method, path), nil); err != nil {
			return 0, nil, err
		}
		return op(ctx, in)
	}
}

// logsFor is the request log as the caller may read it: all of it for admin; for the others
// the records of readScope, whatever the filter asks, in lists, exports, the live tail, a
// single record (404 for another's) and the log's usage sums. The scope is a condition of
// the store's query, so pages are full and cursors exact.
func (a API) logsFor(ctx context.Context) (LogStore, error) {
	sc, err := a.readScope(ctx)
	if err != nil {
		return nil, err
	}
	return a.logsIn(sc), nil
}

// logsIn is the request log narrowed to sc (nil: all of it); nil when no log is kept.
func (a API) logsIn(sc *logstore.Scope) LogStore {
	if a.Logs == nil || sc == nil {
		return a.Logs
	}
	return &scopedLogs{Store: a.Logs, scope: sc}
}

// readScope is what the caller may read of the request log and the usage account: nil
// (everything) for admin; for the others their teams' (team_admin, viewer; the team the
// record names, the key's when the request was made) and their own keys'. One rule for
// both, so the Logs and Usage pages of one caller add up.
func (a API) readScope(ctx context.Context) (*logstore.Scope, error) {
	p := auth.PrincipalFrom(ctx)
	if auth.Unscoped(p) {
		return nil, nil
	}
	sc := &logstore.Scope{}
	if p != nil && (p.Role == auth.RoleTeamAdmin || p.Role == auth.RoleViewer) {
		sc.Teams = p.Teams // the policy's Sees: a member sees their own keys' only
	}
	if p != nil && a.Keys.Store != nil {
		ks, err := a.Keys.Store.List(ctx)
		if err != nil {
			return nil, StoreError(err) // fail closed: no scope, no records
		}
		for _, k := range ks {
			if k.Owner != "" && k.Owner == p.User {
				sc.Keys = append(sc.Keys, k.ID)
			}
		}
	}
	return sc, nil
}

// keySeer reports whether p sees the key of an id, reading each key once. A key that
// cannot be read is not seen: fail closed.
func (a API) keySeer(p *auth.Principal) func(ctx context.Context, id string) bool {
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(ctx context.Context, id string) bool {
		mu.Lock()
		defer mu.Unlock()
		if ok, done := seen[id]; done {
			return ok
		}
		ok := false
		if a.Keys.Store != nil && id != "" {
			if k, err := a.Keys.Store.Get(ctx, id); err == nil {
				ok = auth.Sees(p, auth.KeyResource(k))
			}
		}
		seen[id] = ok
		return ok
	}
}

// scopedLogs is a log store narrowed to scope: every query carries it (replacing any the
// caller's filter might hold), and a single record outside it is not found.
type scopedLogs struct {
	logstore.Store
	scope *logstore.Scope
}

func (s *scopedLogs) Query(ctx context.Context, f logstore.Filter) (logstore.Page, error) {
	f.Scope = s.scope
	return s.Store.Query(ctx, f)
}

func (s *scopedLogs) Get(ctx context.Context, id string) (*logstore.Record, error) {
	r, err := s.Store.Get(ctx, id)
	if err == nil && !s.scope.Holds(r) {
		return nil, logstore.ErrNotFound
	}
	return r, err
}

func (s *scopedLogs) Usage(ctx context.Context, q logstore.UsageQuery) ([]logstore.UsageRow, error) {
	q.Scope = s.scope
	return s.Store.Usage(ctx, q)
}
