package admin

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/sluice-gw/sluice/internal/auth"
	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/telemetry"
	"github.com/sluice-gw/sluice/internal/usage"
)

// API is the admin API under /admin/ (served only when an admin token is set): the keys,
// the account, the statistics and the response cache. Safe for concurrent use.
type API struct {
	Keys Keys
	// Users are the users and their personal tokens (users.go); nil: no /admin/users.
	Users auth.Users
	// Teams is served when Teams.Store is set (auth on).
	Teams Teams
	// Usage is the account; nil: none is kept, and /admin/usage answers no lines.
	Usage usage.Store
	// Stats is the statistics of the last minutes (telemetry.Observer.Report).
	Stats func(ctx context.Context, minutes string) (telemetry.Report, error)
	// Clear deletes the response cache's stored answers of alias ("": all) and returns how
	// many; nil: no cache.
	Clear func(ctx context.Context, alias string) (int, error)
	// Logs is the request log's store (logs.go); nil: no log is kept.
	Logs LogStore
	// Targets are the configured targets, whose state GET /admin/health shows: Cooling is
	// what remains of one's cooldown (nil: not known), Shared pings the shared state (nil:
	// none, the state is this process's).
	Targets []string
	Cooling func(ctx context.Context, target string) time.Duration
	Shared  func(ctx context.Context) error
	// Routing is what routing learned of a target (issue 49); nil: nothing is learned.
	Routing func(target string) Routing
	// Audit records every change made through the API (audit.go); nil: none is recorded.
	Audit AuditStore
	// Log receives what the API cannot do on its own (an audit entry it could not write);
	// nil: slog.Default.
	Log *slog.Logger
}

// Op serves one route of the admin API: it returns the status and the answer to encode, or
// an error of the kinds the edge answers.
type Op func(ctx context.Context, in Input) (int, any, error)

// Input is what an Op is given of its request: the path's id (Sub: its second, a user's
// token), the query and, for POST and PATCH, the body.
type Input struct {
	ID, Sub string
	Query   url.Values
	Body    []byte
}

// NewInput is the Input of a request whose path parameters param reads, unescaped
// (dialect.PathParams), and whose query is q.
func NewInput(param func(name string) string, q url.Values) Input {
	return Input{ID: param("id"), Sub: param("token"), Query: q}
}

// Route is a route of the admin API (echo's path syntax).
type Route struct {
	Method, Path string
	Op           Op
}

// Routes are the API's routes; the edge guards them all with the admin token. Every route
// that changes something records its changes in the audit log (audited), a route added here
// later included.
func (a API) Routes() []Route {
	key := func(op func(context.Context, string, []byte) (int, any, error)) Op {
		return func(ctx context.Context, in Input) (int, any, error) { return op(ctx, in.ID, in.Body) }
	}
	var rs []Route
	if a.Keys.Store != nil { // nil: auth is off, there is no key to manage
		rs = []Route{
			{http.MethodPost, "/admin/keys", key(a.Keys.Create)},
			{http.MethodGet, "/admin/keys", key(a.Keys.List)},
			{http.MethodGet, "/admin/keys/:id", key(a.Keys.Get)},
			{http.MethodPatch, "/admin/keys/:id", key(a.Keys.Patch)},
			{http.MethodDelete, "/admin/keys/:id", key(a.Keys.Delete)},
		}
	}
	if a.Users != nil {
		rs = append(rs, a.userRoutes()...)
	}
	if a.Teams.Store != nil {
		rs = append(rs, []Route{
			{http.MethodPost, "/admin/teams", key(a.Teams.Create)},
			{http.MethodGet, "/admin/teams", key(a.Teams.List)},
			{http.MethodGet, "/admin/teams/:id", key(a.Teams.Get)},
			{http.MethodPatch, "/admin/teams/:id", key(a.Teams.Patch)},
			{http.MethodDelete, "/admin/teams/:id", key(a.Teams.Delete)},
		}...)
		if a.Teams.Users != nil {
			rs = append(rs, []Route{
				{http.MethodGet, "/admin/teams/:id/members", key(a.Teams.Members)}, // members.go
				{http.MethodPatch, "/admin/teams/:id/members", key(a.Teams.PatchMembers)},
			}...)
		}
	}
	rs = append(rs, []Route{
		{http.MethodGet, "/admin/usage", a.usage},
		{http.MethodDelete, "/admin/cache", a.clear},
		{http.MethodGet, "/admin/stats", a.stats},
		{http.MethodGet, "/admin/health", a.health},
		{http.MethodGet, "/admin/logs", a.logs}, // logs.go
		{http.MethodGet, "/admin/logs/export", a.export},
		{http.MethodGet, "/admin/logs/tail", a.tail},
		{http.MethodGet, "/admin/logs/:id", a.log},
		{http.MethodGet, "/admin/audit", a.auditList}, // audit.go
		{http.MethodGet, "/admin/version", version},   // admin only: which build runs is no one else's business
	}...)
	for i, r := range rs { // the role policy before every route (scope.go)
		rs[i].Op = guard(r.Method, r.Path, r.Op)
	}
	return a.audited(rs) // a change refused by the policy is an error: not recorded
}

// usage serves GET /admin/usage (UsageQuery): the account's lines, or the request log's
// for what only it can answer (fromLog). A caller other than admin reads the sums of
// readScope, as their request log: without key= their teams' (team_admin, viewer) or their
// own keys' (member); key= and team= narrow it, and one they do not see is a 404, as one
// that does not exist (no existence leak).
func (a API) usage(ctx context.Context, in Input) (int, any, error) {
	sc, err := a.readScope(ctx)
	if err != nil {
		return 0, nil, err
	}
	if sc != nil {
		p := auth.PrincipalFrom(ctx)
		if id := in.Query.Get("key"); id != "" && !a.keySeer(p)(ctx, id) {
			return 0, nil, StoreError(auth.ErrNotFound)
		}
		if t := in.Query.Get("team"); t != "" && (p == nil || !slices.Contains(p.Teams, t)) {
			return 0, nil, TeamStoreError(auth.ErrNoTeam)
		}
	}
	if fromLog(in.Query) {
		return a.logUsage(ctx, in.Query, sc)
	}
	q, err := UsageQuery(in.Query, time.Now())
	if err != nil {
		return 0, nil, err
	}
	if sc != nil {
		q.Scope = &usage.Scope{Teams: sc.Teams, Keys: sc.Keys}
	}
	var lines []usage.Line
	var total usage.Counts
	if a.Usage != nil {
		if lines, total, err = usage.Report(ctx, a.Usage, q); err != nil {
			return 0, nil, unreachable("The account (Redis) is unreachable. Retry shortly.")
		}
	}
	return http.StatusOK, Report(q, lines, total), nil
}

// clear serves DELETE /admin/cache: every stored answer, or those of ?alias=. A store that
// cannot be reached is a 503: the caller asked for the deletion.
func (a API) clear(ctx context.Context, in Input) (int, any, error) {
	alias, n := in.Query.Get("alias"), 0
	if a.Clear != nil {
		var err error
		if n, err = a.Clear(ctx, alias); err != nil {
			return 0, nil, unreachable("The cache (Redis) is unreachable. Retry shortly.")
		}
	}
	var named *string
	if alias != "" {
		named = &alias
	}
	return http.StatusOK, struct {
		Object  string  `json:"object"`
		Alias   *string `json:"alias"`
		Deleted int     `json:"deleted"`
	}{"cache.cleared", named, n}, nil
}

// stats serves GET /admin/stats?minutes=N: per alias and served target, and the response
// cache's results per alias, over the last N minutes (default and maximum:
// telemetry.stats_window), every replica's when Redis is configured. With Redis unreachable
// it answers for this replica alone, and says so.
func (a API) stats(ctx context.Context, in Input) (int, any, error) {
	r, err := a.Stats(ctx, in.Query.Get("minutes"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, r, nil
}

// version serves GET /admin/version: the running binary's build (telemetry.Build), as
// `sluice version` prints it and sluice_build_info labels it.
func version(context.Context, Input) (int, any, error) {
	return http.StatusOK, struct {
		Object string `json:"object"`
		telemetry.Build
	}{"version", telemetry.ReadBuild()}, nil
}

// health serves GET /admin/health: each configured target's cooldown and its requests and
// errors over the statistics' window (every replica's with Redis), and whether the shared
// state and the request log's store answer ("off": none is configured).
func (a API) health(ctx context.Context, _ Input) (int, any, error) {
	type target struct {
		Target    string     `json:"target"`
		Cooling   bool       `json:"cooling_down"`
		Until     *time.Time `json:"until"`
		Requests  int64      `json:"requests"`
		Errors    int64      `json:"errors"`
		ErrorRate float64    `json:"error_rate"`
		Routing
	}
	r, err := a.Stats(ctx, "")
	if err != nil {
		return 0, nil, err
	}
	seen := map[string]*target{}
	ts := []*target{}
	add := func(name string) *target {
		if seen[name] == nil {
			seen[name] = &target{Target: name}
			ts = append(ts, seen[name])
		}
		return seen[name]
	}
	for _, name := range a.Targets {
		t := add(name)
		if a.Routing != nil {
			t.Routing = a.Routing(name)
		}
		if a.Cooling != nil {
			if left := a.Cooling(ctx, name); left > 0 {
				until := time.Now().Add(left).UTC().Truncate(time.Second)
				t.Cooling, t.Until = true, &until
			}
		}
	}
	for _, row := range r.Data {
		if row.Target != "" {
			t := add(row.Target) // a direct provider/model call's too
			t.Requests, t.Errors = t.Requests+row.Requests, t.Errors+row.Errors
		}
	}
	for _, t := range ts {
		if t.Requests > 0 {
			t.ErrorRate = float64(t.Errors) / float64(t.Requests)
		}
	}
	state := func(ping func(context.Context) error) string {
		switch {
		case ping == nil:
			return "off"
		case ping(ctx) != nil:
			return "unreachable"
		}
		return "ok"
	}
	var logs func(context.Context) error
	if a.Logs != nil {
		logs = a.Logs.Ping
	}
	return http.StatusOK, struct {
		Object  string    `json:"object"`
		Minutes int       `json:"minutes"`
		Targets []*target `json:"targets"`
		Redis   string    `json:"redis"`
		Logs    string    `json:"logs"`
	}{"health", r.Minutes, ts, state(a.Shared), state(logs)}, nil
}

// Routing is a target's state as routing sees it (issue 49): its adaptive weight, the peak
// EWMA and the p95 of its time to first token, its attempts in flight (every replica's) and
// its recent error rate. A target that served nothing recently has weight 1 and zeros.
type Routing struct {
	Weight    float64 `json:"weight"`
	LatencyMS float64 `json:"ewma_ms"`
	P95MS     float64 `json:"ttft_p95_ms"`
	InFlight  int     `json:"in_flight"`
	ErrorRate float64 `json:"recent_error_rate"`
}

func unreachable(msg string) error {
	return &llm.Error{Kind: llm.Unavailable, Status: http.StatusServiceUnavailable, Code: "redis_unavailable",
		Type: "server_error", Message: msg}
}

// WithStores is a with the stores of the key, team and user routes: keys nil (auth off) has
// no key or team to manage; teams nil, no team routes; users nil, no user routes.
// guardrail reports whether a guardrail name is configured.
func (a API) WithStores(keys *auth.Keys, teams *auth.Teams, users auth.Users, guardrail func(string) bool) API {
	if keys != nil {
		a.Keys = Keys{Store: keys, Teams: teams, Guardrail: guardrail}
		if teams != nil {
			a.Teams = Teams{Store: teams, Keys: keys, Users: users}
		}
	}
	a.Users = users
	return a
}
