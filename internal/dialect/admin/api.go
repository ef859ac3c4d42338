package admin

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/usage"
)

// API is the admin API under /admin/ (served only when an admin token is set): the keys,
// the account, the statistics and the response cache. Safe for concurrent use.
type API struct {
	Keys Keys
	// Usage is the account; nil: none is kept, and /admin/usage answers no lines.
	Usage usage.Store
	// Stats is the statistics of the last minutes (telemetry.Observer.Report).
	Stats func(ctx context.Context, minutes string) (any, error)
	// Clear deletes the response cache's stored answers of alias ("": all) and returns how
	// many; nil: no cache.
	Clear func(ctx context.Context, alias string) (int, error)
	// Logs is the request log's store (logs.go); nil: no log is kept.
	Logs LogStore
}

// Op serves one route of the admin API: it returns the status and the answer to encode, or
// an error of the kinds the edge answers.
type Op func(ctx context.Context, in Input) (int, any, error)

// Input is what an Op is given of its request: the path's id, the query and, for POST and
// PATCH, the body.
type Input struct {
	ID    string
	Query url.Values
	Body  []byte
}

// Route is a route of the admin API (echo's path syntax).
type Route struct {
	Method, Path string
	Op           Op
}

// Routes are the API's routes; the edge guards them all with the admin token.
func (a API) Routes() []Route {
	key := func(op func(context.Context, string, []byte) (int, any, error)) Op {
		return func(ctx context.Context, in Input) (int, any, error) { return op(ctx, in.ID, in.Body) }
	}
	return []Route{
		{http.MethodPost, "/admin/keys", key(a.Keys.Create)},
		{http.MethodGet, "/admin/keys", key(a.Keys.List)},
		{http.MethodGet, "/admin/keys/:id", key(a.Keys.Get)},
		{http.MethodPatch, "/admin/keys/:id", key(a.Keys.Patch)},
		{http.MethodDelete, "/admin/keys/:id", key(a.Keys.Delete)},
		{http.MethodGet, "/admin/usage", a.usage},
		{http.MethodDelete, "/admin/cache", a.clear},
		{http.MethodGet, "/admin/stats", a.stats},
		{http.MethodGet, "/admin/logs", a.logs}, // logs.go
		{http.MethodGet, "/admin/logs/export", a.export},
		{http.MethodGet, "/admin/logs/tail", a.tail},
		{http.MethodGet, "/admin/logs/:id", a.log},
	}
}

// usage serves GET /admin/usage (UsageQuery): the account's lines, or the request log's
// for what only it can answer (fromLog).
func (a API) usage(ctx context.Context, in Input) (int, any, error) {
	if fromLog(in.Query) {
		return a.logUsage(ctx, in.Query)
	}
	q, err := UsageQuery(in.Query, time.Now())
	if err != nil {
		return 0, nil, err
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

func unreachable(msg string) error {
	return &llm.Error{Kind: llm.Unavailable, Status: http.StatusServiceUnavailable, Code: "redis_unavailable",
		Type: "server_error", Message: msg}
}
